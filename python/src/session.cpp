// ferry.Session's C++ side: a ferry::session (ferry/session/session.hpp) over an engine made as `ferry
// bench` makes it (bench::make_workload: built-ins sized by bytes or batch, model files through
// their backend plugins, found where the CLI finds them), and its slots with their typestate:
// filling -> pending -> completed -> released, one variant, checked on every call.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>  // acquire() hands its slot to Python
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bindings.hpp"
#include "ferry/bench/workload_factory.hpp"
#include "ferry/core/byte_size.hpp"
#include "ferry/core/error.hpp"
#include "ferry/engines/backend.hpp"
#include "ferry/engines/builtin.hpp"
#include "ferry/engines/model_engine.hpp"
#include "ferry/memory/strategy.hpp"
#include "ferry/session/session.hpp"

namespace nb = nanobind;

namespace ferry::python {
namespace {

struct session_request {
  std::string engine;
  std::string strategy;
  int inflight = 2;
  int device = 0;
  std::string size;  // built-ins sized by bytes; empty: the CLI's default
  std::int64_t batch = 16;
  std::map<std::string, std::vector<std::int64_t>> shapes;
  std::map<std::string, std::string> tensor_strategies;
  std::string graph = "off";  // "off", "on" or "auto" (graph_mode::automatic)
  bool allow_oversubscription = false;
  std::string backend_directory;
};

nb::dict describe(const tensor_spec& spec) {
  nb::dict d;
  d["name"] = spec.name;
  d["dtype"] = std::string(to_string(spec.type));
  d["shape"] = spec.shape;
  d["role"] = spec.role == tensor_role::input ? "input" : "output";
  d["nbytes"] = spec.bytes();
  return d;
}

class python_session;

class python_slot {
 public:
  explicit python_slot(filling_slot slot) : state_(std::move(slot)) {}

  [[nodiscard]] std::string state() const {
    static constexpr const char* names[] = {"filling", "pending", "completed", "released"};
    return names[state_.index()];
  }

  // (address, bytes) of input `name`'s host view; only while filling.
  [[nodiscard]] nb::tuple input(const std::string& name) {
    const auto view = as<filling_slot>("inputs are written", "filling").input(name);
    return nb::make_tuple(reinterpret_cast<std::uintptr_t>(view.data()), view.size());
  }

  // (address, bytes) of output `name`'s host view; only once completed.
  [[nodiscard]] nb::tuple output(const std::string& name) const {
    const auto view = const_cast<python_slot*>(this)->as<completed_slot>("outputs are read", "completed").output(name);
    return nb::make_tuple(reinterpret_cast<std::uintptr_t>(view.data()), view.size());
  }

  // Inputs of a strategy whose data is kept in GPU memory (`device`, `peer`) are copied up first
  // (blocking, outside any timing), so a request gives the same results under every strategy.
  void submit(bool timed) {
    auto& filling = as<filling_slot>("a request is submitted", "filling");
    filling.upload_resident_inputs();
    pending_slot pending = std::move(filling).submit(timed ? stage_timing::events : stage_timing::off);
    state_ = std::move(pending);
  }

  void wait() {
    auto& pending = as<pending_slot>("a request is waited for", "pending");
    completed_slot completed = std::move(pending).wait();
    completed.download_resident_outputs();
    state_ = std::move(completed);
  }

  void wait_inputs_consumed() {
    as<pending_slot>("wait_inputs_consumed() is called", "pending").wait_inputs_consumed();
  }

  [[nodiscard]] nb::dict times() const {
    const stage_times t =
        const_cast<python_slot*>(this)->as<completed_slot>("stage times are read", "completed").times();
    nb::dict d;
    d["h2d_ms"] = t.h2d_ms;
    d["compute_ms"] = t.compute_ms;
    d["d2h_ms"] = t.d2h_ms;
    d["total_ms"] = t.total_ms;
    d["enqueue_us"] = t.enqueue_us;
    return d;
  }

  // Gives the slot back to its session; a submitted request is waited for first (the session's rule).
  void release() { state_ = std::monostate{}; }

 private:
  template <typename State>
  State& as(const char* what, const char* needed) {
    if (auto* s = std::get_if<State>(&state_)) return *s;
    throw invalid_argument(std::string(what) + " only while the request is " + needed + "; it is " + state());
  }

  std::variant<filling_slot, pending_slot, completed_slot, std::monostate> state_;
};

graph_mode parse_graph_mode(const std::string& name) {
  if (name == "off") return graph_mode::off;
  if (name == "on") return graph_mode::on;
  if (name == "auto") return graph_mode::automatic;
  throw invalid_argument("graph must be False, True or \"auto\", not '" + name + "'");
}

class python_session {
 public:
  explicit python_session(const session_request& r) {
    session_options options;
    options.strategy = parse_strategy(r.strategy);
    options.inflight = r.inflight;
    options.graph = parse_graph_mode(r.graph);
    options.managed_policy = r.allow_oversubscription ? oversubscription::allow : oversubscription::refuse;
    for (const auto& [tensor, strategy] : r.tensor_strategies)
      options.tensor_strategies.push_back({tensor, parse_strategy(strategy)});
    if (r.inflight < 1) throw invalid_argument("inflight must be at least 1, not " + std::to_string(r.inflight));

    // What can be checked without a GPU is, first, so a typo is named on any machine.
    if (!is_model_engine_spec(r.engine)) validate_builtin_spec(r.engine);
    bench::workload_request w;
    w.engine = r.engine;
    w.batch = r.batch;
    if (!r.size.empty()) w.input_bytes = parse_byte_size(r.size);
    for (const auto& [name, dims] : r.shapes) w.shapes.push_back({name, dims});
    w.devices = {r.device};
    w.max_concurrency = r.inflight;
    w.backend_directories = backend_directories(r.backend_directory);

    const device_caps caps = usable_device(r.device);
    const bench::workload workload = bench::make_workload(w);
    engine_ = workload.make_engine(caps.ordinal);
    auto io = engine_->resolve(workload.shapes);
    session_ = std::make_unique<session>(*engine_, std::move(io), options, caps);
  }

  [[nodiscard]] std::unique_ptr<python_slot> acquire() {
    nb::gil_scoped_release unlocked;  // blocks until a slot is free
    return std::make_unique<python_slot>(session_->acquire());
  }

  [[nodiscard]] std::unique_ptr<python_slot> try_acquire(double timeout_seconds) {
    nb::gil_scoped_release unlocked;
    auto slot = session_->try_acquire(std::chrono::milliseconds(static_cast<std::int64_t>(timeout_seconds * 1000)));
    return slot ? std::make_unique<python_slot>(std::move(*slot)) : nullptr;
  }

  [[nodiscard]] nb::list io() const {
    nb::list list;
    for (const auto& spec : session_->io()) list.append(describe(spec));
    return list;
  }

  [[nodiscard]] std::string strategy_of(const std::string& tensor) const {
    return std::string(to_string(session_->strategy_of(tensor)));
  }
  [[nodiscard]] std::string engine_name() const { return std::string(engine_->name()); }
  [[nodiscard]] int slots() const { return session_->slots(); }
  [[nodiscard]] int device() const { return session_->ordinal(); }
  [[nodiscard]] int slots_in_use() const { return session_->slots_in_use(); }
  [[nodiscard]] bool graph_active() const { return session_->graph().active; }
  // Why not, when graphs were asked for and are not used; under "auto", the figures the choice
  // rests on whichever way it went.
  [[nodiscard]] std::string graph_reason() const {
    const graph_status& g = session_->graph();
    if (!g.reason.empty() || !g.measured) return g.reason;
    return describe(*g.measured);
  }
  void warmup(int rounds) {
    nb::gil_scoped_release unlocked;
    session_->warmup(rounds);
  }

 private:
  std::unique_ptr<engine> engine_;  // made first, destroyed last: the session's contexts use it
  std::unique_ptr<session> session_;
};

}  // namespace

void bind_session(nb::module_& m) {
  nb::class_<session_request>(m, "_SessionRequest")
      .def(nb::init<>())
      .def_rw("engine", &session_request::engine)
      .def_rw("strategy", &session_request::strategy)
      .def_rw("inflight", &session_request::inflight)
      .def_rw("device", &session_request::device)
      .def_rw("size", &session_request::size)
      .def_rw("batch", &session_request::batch)
      .def_rw("shapes", &session_request::shapes)
      .def_rw("tensor_strategies", &session_request::tensor_strategies)
      .def_rw("graph", &session_request::graph)
      .def_rw("allow_oversubscription", &session_request::allow_oversubscription)
      .def_rw("backend_directory", &session_request::backend_directory);

  nb::class_<python_slot>(m, "_Slot", "one slot of a session, in its typestate")
      .def_prop_ro("state", &python_slot::state)
      .def("input", &python_slot::input, nb::arg("name"))
      .def("output", &python_slot::output, nb::arg("name"))
      .def("submit", &python_slot::submit, nb::arg("timed"), nb::call_guard<nb::gil_scoped_release>())
      .def("wait", &python_slot::wait, nb::call_guard<nb::gil_scoped_release>())
      .def("wait_inputs_consumed", &python_slot::wait_inputs_consumed, nb::call_guard<nb::gil_scoped_release>())
      .def("times", &python_slot::times)
      .def("release", &python_slot::release, nb::call_guard<nb::gil_scoped_release>());

  nb::class_<python_session>(m, "_Session", "a ferry::session over an engine made from its spec")
      .def(nb::init<const session_request&>(), nb::arg("request"))
      // A slot keeps its session alive: its buffers are the session's.
      .def("acquire", &python_session::acquire, nb::keep_alive<0, 1>())
      .def("try_acquire", &python_session::try_acquire, nb::arg("timeout_seconds"), nb::keep_alive<0, 1>())
      .def("io", &python_session::io)
      .def("strategy_of", &python_session::strategy_of, nb::arg("tensor"))
      .def_prop_ro("engine_name", &python_session::engine_name)
      .def_prop_ro("slots", &python_session::slots)
      .def_prop_ro("device", &python_session::device)
      .def_prop_ro("slots_in_use", &python_session::slots_in_use)
      .def_prop_ro("graph_active", &python_session::graph_active)
      .def_prop_ro("graph_reason", &python_session::graph_reason)
      .def("warmup", &python_session::warmup, nb::arg("rounds"));
}

}  // namespace ferry::python
