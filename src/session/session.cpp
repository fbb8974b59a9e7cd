// The session's slot pool and the typestate handles over it.
#include "ferry/session/session.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>

#include <nvtx3/nvtx3.hpp>

#include "ferry/device/device_diagnosis.hpp"
#include "session/batch_shapes.hpp"
#include "session/slot.hpp"

namespace ferry {

struct session::state {
  int ordinal = 0;
  session_options options;
  std::vector<tensor_spec> io;
  std::vector<std::int64_t> batch_sizes;  // ascending, the full one last; empty without options.batch_sizes
  std::vector<std::unique_ptr<detail::slot>> slots;
  graph_status graph;
  bool graphs_chosen = false;  // graph_mode::automatic's trial has run (once per session)
  std::mutex mutex;
  std::condition_variable freed;
  std::vector<detail::slot*> free_slots;
  std::vector<std::thread::id> holders;  // by slot index: the thread that acquired it, none while free
  std::function<void()> release_listener;
};

namespace {
// The index of the tensor named `name` among a slot's inputs or outputs.
template <typename Tensors>
std::size_t find_index(const Tensors& tensors, std::string_view name, const char* role) {
  for (std::size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].spec.name == name) return i;
  std::string names;
  for (const auto& t : tensors) names += (names.empty() ? "" : ", ") + t.spec.name;
  throw invalid_argument("unknown " + std::string(role) + " tensor '" + std::string(name) + "'; the engine's " + role +
                         "s are: " + names);
}
void check_index(std::size_t index, std::size_t count, const char* role) {
  if (index >= count)
    throw invalid_argument(std::string(role) + " index " + std::to_string(index) + " out of range (" +
                           std::to_string(count) + " " + role + "s)");
}
// Reads every output byte, as a client reading its results does, so managed pages make the
// same trip back to the CPU, and the CPU's caches and TLBs end up as on real requests.
void read_outputs_like_a_client(const completed_slot& done) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < done.output_count(); ++i)
    for (const std::byte b : done.output(i)) sum += static_cast<std::uint8_t>(b);
  volatile std::uint64_t sink = sum;
  (void)sink;
}
// How many graphs of its own each slot's context may keep (graph_kind::engine): one per set of
// bound addresses, so a server's slot that binds several clients' shared memory in place keeps a
// graph for each. The graphs of one context share its memory pool (they replay one after another
// on the slot's stream), so more graphs cost their launch state, not their activations again.
constexpr int own_graphs_per_slot = 16;

// warmup() and refresh_graph_status() wait for every slot: a thread still holding one it acquired
// (a filling, pending or completed handle alive) would wait for itself for ever.
void refuse_waiting_for_own_slot(std::mutex& mutex, const std::vector<std::thread::id>& holders,
                                 const char* operation) {
  const std::lock_guard lock(mutex);
  if (std::find(holders.begin(), holders.end(), std::this_thread::get_id()) == holders.end()) return;
  throw invalid_argument(std::string(operation) +
                         " waits until every slot of the session is free, and the calling thread still holds one "
                         "it acquired (a filling, pending or completed slot): let that handle go first");
}

// graph_mode::on: each slot's pipeline captured by the session where the engine allows a plain
// capture, else graphs the engine captures of its own run where it offers them. All slots or none:
// a mix would make the timing of one run incomparable.
graph_status start_graphs(const std::vector<std::unique_ptr<detail::slot>>& slots) {
  const auto plain_refusal = slots.front()->capture_refusal();
  if (!plain_refusal) {
    for (const auto& s : slots) {
      if (auto failure = s->capture_graphs()) {
        for (const auto& t : slots) t->drop_graphs();
        return {false, graph_kind::none, "CUDA graph capture failed, running without graphs: " + *failure,
                std::nullopt};
      }
    }
    return {true, graph_kind::pipeline, "", std::nullopt};
  }
  for (const auto& s : slots) {
    if (auto refusal = s->use_own_graphs(own_graphs_per_slot)) {
      for (const auto& t : slots) (void)t->use_own_graphs(0);
      return {false, graph_kind::none, "CUDA graphs not used: " + *plain_refusal + "; " + *refusal, std::nullopt};
    }
  }
  return {true, graph_kind::engine, "", std::nullopt};
}

// "table (input), indices (input), rows (output)": what a refusal lists as the known tensors.
std::string tensor_list(std::span<const tensor_spec> io) {
  std::string names;
  for (const auto& t : io)
    names += (names.empty() ? "" : ", ") + t.name + (t.role == tensor_role::input ? " (input)" : " (output)");
  return names.empty() ? "none" : names;
}
}  // namespace

strategy_kind strategy_for(const session_options& options, std::string_view tensor) noexcept {
  for (const auto& o : options.tensor_strategies)
    if (o.tensor == tensor) return o.strategy;
  return options.strategy;
}

void check_tensor_strategies(std::span<const tensor_spec> io, std::span<const tensor_strategy> overrides) {
  for (std::size_t i = 0; i < overrides.size(); ++i) {
    const std::string& name = overrides[i].tensor;
    if (std::none_of(io.begin(), io.end(), [&](const tensor_spec& t) { return t.name == name; }))
      throw invalid_argument("tensor_strategies names '" + name +
                             "', which is not a tensor of the engine; its tensors are: " + tensor_list(io));
    for (std::size_t j = 0; j < i; ++j)
      if (overrides[j].tensor == name)
        throw invalid_argument("tensor_strategies names '" + name + "' twice ('" +
                               std::string(to_string(overrides[j].strategy)) + "' and '" +
                               std::string(to_string(overrides[i].strategy)) + "'); name each tensor once");
  }
}

void check_session_options(std::span<const tensor_spec> io, const session_options& options, const device_caps& caps) {
  if (options.inflight < 1) throw invalid_argument("inflight must be at least 1");
  check_tensor_strategies(io, options.tensor_strategies);
  // Each strategy some tensor goes by, in all_strategies order, with the tensors that use it, so
  // a refusal says which tensors asked for it.
  for (const strategy_kind k : all_strategies) {
    std::string users;
    for (const auto& t : io)
      if (strategy_for(options, t.name) == k) users += (users.empty() ? "'" : ", '") + t.name + "'";
    if (users.empty()) continue;
    if (auto reason = unavailable_reason(k, caps))
      throw unsupported("strategy '" + std::string(to_string(k)) + "' (for " + users + ") is not available on " +
                        caps.name + ": " + *reason);
  }
}

session::session(engine& eng, std::vector<tensor_spec> concrete_io, const session_options& options,
                 const device_caps& caps)
    : state_(std::make_unique<state>()) {
  check_session_options(concrete_io, options, caps);
  require_code_for(caps);  // a GPU this build has no code for is refused here, naming both architectures
  state_->ordinal = caps.ordinal;
  state_->options = options;
  state_->io = std::move(concrete_io);
  const auto shapes = detail::resolve_batch_shapes(eng, state_->io, options.batch_sizes);
  if (!options.batch_sizes.empty())
    for (const auto& shape : shapes) state_->batch_sizes.push_back(shape.rows);
  for (int i = 0; i < options.inflight; ++i) state_->slots.push_back(detail::slot::make(i, eng, shapes, options, caps));

  if (options.graph == graph_mode::on) state_->graph = start_graphs(state_->slots);
  for (auto& s : state_->slots) state_->free_slots.push_back(s.get());
  state_->holders.resize(state_->slots.size());
}

session::~session() {
  // Every handle keeps the session alive by contract; by now all slots are back in the pool.
  for (auto& s : state_->slots) {
    try {
      s->wait_blocking();
    } catch (const std::exception&) {  // destructors never throw; the error was logged
    }
  }
  state_->slots.clear();  // each on its own GPU (slot::~slot)
}

filling_slot session::acquire() {
  std::unique_lock lock(state_->mutex);
  state_->freed.wait(lock, [this] { return !state_->free_slots.empty(); });
  detail::slot* s = state_->free_slots.back();
  state_->free_slots.pop_back();
  state_->holders[static_cast<std::size_t>(s->index)] = std::this_thread::get_id();
  s->reset_tensors();  // the last request's caller memory is not this one's
  s->select_shape(s->shapes().size() - 1);
  return filling_slot(detail::slot_handle(s, detail::slot_release{this}));
}

std::optional<filling_slot> session::try_acquire(std::chrono::milliseconds timeout) {
  std::unique_lock lock(state_->mutex);
  if (!state_->freed.wait_for(lock, timeout, [this] { return !state_->free_slots.empty(); })) return std::nullopt;
  detail::slot* s = state_->free_slots.back();
  state_->free_slots.pop_back();
  state_->holders[static_cast<std::size_t>(s->index)] = std::this_thread::get_id();
  s->reset_tensors();  // the last request's caller memory is not this one's
  s->select_shape(s->shapes().size() - 1);
  return filling_slot(detail::slot_handle(s, detail::slot_release{this}));
}

void session::release(detail::slot* s) noexcept {
  {
    std::lock_guard lock(state_->mutex);
    state_->free_slots.push_back(s);
    state_->holders[static_cast<std::size_t>(s->index)] = {};
  }
  state_->freed.notify_one();
  if (state_->release_listener) {
    try {
      state_->release_listener();
    } catch (const std::exception&) {  // a release never throws; listeners only notify
    }
  }
}

int session::slots_in_use() const {
  std::lock_guard lock(state_->mutex);
  return static_cast<int>(state_->slots.size() - state_->free_slots.size());
}

void session::set_release_listener(std::function<void()> listener) { state_->release_listener = std::move(listener); }

void session::warmup(int rounds, const input_data& data) {
  nvtx3::scoped_range r{"ferry.warmup"};
  refuse_waiting_for_own_slot(state_->mutex, state_->holders, "warmup()");
  // Values every model takes (ferry/session/input_data.hpp): engines should not see garbage even when
  // it is not timed. An out-of-range id would trip a device-side assert in a real model.
  const input_data values = data.bound_to(state_->io);
  std::uint64_t request = 0;
  for (int round = 0; round < rounds; ++round) run_round_per_size(values, request);
  (void)refresh_graph_status();  // the engine's own graphs were captured on these runs
  if (state_->options.graph == graph_mode::automatic && !state_->graphs_chosen) choose_graphs(rounds, values, request);
}

void session::run_round_per_size(const input_data& bound_values, std::uint64_t& request) {
  if (state_->batch_sizes.empty()) {
    (void)run_round(bound_values, request);
    return;
  }
  for (const std::int64_t rows : state_->batch_sizes) (void)run_round(bound_values, request, rows);
}

double session::run_round(const input_data& bound_values, std::uint64_t& request, std::optional<std::int64_t> rows) {
  const auto began = std::chrono::steady_clock::now();
  // Hold every slot at once so each one runs, not the same slot N times.
  std::vector<filling_slot> held;
  for (int i = 0; i < slots(); ++i) held.push_back(acquire());
  std::vector<pending_slot> pending;
  for (auto& f : held) {
    if (rows) f.run_at_rows(*rows);
    for (std::size_t i = 0; i < f.input_count(); ++i) bound_values.fill(f.input(i), 0, f.input_spec(i), request);
    ++request;
    f.upload_resident_inputs();
    pending.push_back(std::move(f).submit());
  }
  for (auto& p : pending) {
    auto done = std::move(p).wait();
    read_outputs_like_a_client(done);
  }
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - began).count();
}

void session::choose_graphs(int warmup_rounds, const input_data& bound_values, std::uint64_t& request) {
  nvtx3::scoped_range r{"ferry.choose_graphs"};
  state_->graphs_chosen = true;
  std::vector<double> without(graph_trial_rounds), with(graph_trial_rounds);
  for (double& us : without) us = run_round(bound_values, request);
  state_->graph = start_graphs(state_->slots);
  if (!state_->graph.active) return;  // refused or failed: the status says why, and nothing was timed
  // The engine's own graphs are captured on these rounds (an engine captures a key on its third
  // run, after two plain ones: engines/graph_cache.hpp), so there are three at least; the
  // session's own graphs are warmed up by them.
  for (int round = 0; round < std::max(warmup_rounds, 3); ++round) run_round_per_size(bound_values, request);
  if (!refresh_graph_status().active) return;
  for (double& us : with) us = run_round(bound_values, request);
  const graph_measurement measured = summarise_graph_trial(without, with, slots());
  if (graphs_pay(measured)) {
    state_->graph.measured = measured;
    return;
  }
  // Every slot is free here (run_round gave them back): no graph is replaying while it goes.
  const bool own = state_->graph.kind == graph_kind::engine;
  for (const auto& s : state_->slots) {
    const auto on_device = s->work.activate();
    if (own)
      (void)s->use_own_graphs(0);
    else
      s->drop_graphs();
  }
  state_->graph = {.active = false, .kind = graph_kind::none, .reason = describe(measured), .measured = measured};
}

const graph_status& session::refresh_graph_status() {
  if (state_->graph.kind != graph_kind::engine || !state_->graph.active) return state_->graph;
  refuse_waiting_for_own_slot(state_->mutex, state_->holders, "refresh_graph_status()");
  // Every slot held: no context is enqueued while its engine is asked.
  std::vector<filling_slot> held;
  for (int i = 0; i < slots(); ++i) held.push_back(acquire());
  for (const auto& s : state_->slots) {
    if (auto failure = s->own_graphs_failure()) {
      state_->graph = {false, graph_kind::engine,
                       "the engine's own CUDA graph capture failed, its requests run without graphs: " + *failure,
                       std::nullopt};
      break;
    }
  }
  return state_->graph;
}

const session_options& session::options() const noexcept { return state_->options; }
const std::vector<std::int64_t>& session::batch_sizes() const noexcept { return state_->batch_sizes; }
strategy_kind session::strategy_of(std::string_view tensor) const {
  if (std::none_of(state_->io.begin(), state_->io.end(), [&](const tensor_spec& t) { return t.name == tensor; }))
    throw invalid_argument("unknown tensor '" + std::string(tensor) +
                           "'; the engine's tensors are: " + tensor_list(state_->io));
  return strategy_for(state_->options, tensor);
}
const std::vector<tensor_spec>& session::io() const noexcept { return state_->io; }
const graph_status& session::graph() const noexcept { return state_->graph; }
int session::slots() const noexcept { return static_cast<int>(state_->slots.size()); }
int session::ordinal() const noexcept { return state_->ordinal; }

void detail::slot_release::operator()(slot* s) const noexcept {
  if (owner != nullptr && s != nullptr) owner->release(s);
}

// ---- filling_slot ----

std::span<std::byte> filling_slot::input(std::string_view name) {
  return input(find_index(slot_->inputs, name, "input"));
}
void filling_slot::run_at_rows(std::int64_t rows) {
  const auto& shapes = slot_->shapes();
  for (std::size_t k = 0; k < shapes.size(); ++k)
    if (shapes[k].rows == rows) {
      slot_->select_shape(k);
      return;
    }
  std::string sizes;
  for (const auto& shape : shapes) sizes += (sizes.empty() ? "" : ", ") + std::to_string(shape.rows);
  throw invalid_argument("this session runs batches of " + sizes + " rows, not " + std::to_string(rows));
}

std::span<std::byte> filling_slot::input(std::size_t index) {
  check_index(index, slot_->inputs.size(), "input");
  const auto& t = slot_->inputs[index];
  return slot_->inputs[index].buffer.host().first(t.spec.bytes());
}
std::size_t filling_slot::input_count() const noexcept { return slot_->inputs.size(); }
const tensor_spec& filling_slot::input_spec(std::size_t index) const {
  check_index(index, slot_->inputs.size(), "input");
  return slot_->inputs[index].spec;
}
int filling_slot::slot_index() const noexcept { return slot_->index; }
int filling_slot::ordinal() const noexcept { return slot_->ordinal(); }

void filling_slot::upload_resident_inputs() {
  for (auto& t : slot_->inputs) {
    // Caller-fed and gathered inputs reach device memory in stream order; the host view is stale.
    if (!t.fed_by_caller() && properties(t.buffer.strategy()).path == data_path::resident)
      t.buffer.upload_blocking(slot_->work, t.spec.bytes());
  }
}

void filling_slot::use_caller_input(std::size_t index, std::span<const std::byte> registered_memory) {
  check_index(index, slot_->inputs.size(), "input");
  slot_->use_caller_input(index, registered_memory);
}

std::optional<in_place_refusal> filling_slot::input_in_place_refusal(std::size_t index,
                                                                     std::span<const std::byte> memory) const {
  check_index(index, slot_->inputs.size(), "input");
  return slot_->input_in_place_refusal(index, memory);
}

void filling_slot::gather_input(std::size_t index, std::span<const gather_piece> pieces) {
  check_index(index, slot_->inputs.size(), "input");
  slot_->gather_input(index, pieces);
}

void filling_slot::bind_caller_output(std::size_t index, std::span<std::byte> memory) {
  check_index(index, slot_->outputs.size(), "output");
  slot_->bind_caller_output(index, memory);
}

std::optional<in_place_refusal> filling_slot::output_in_place_refusal(std::size_t index,
                                                                      std::span<const std::byte> memory) const {
  check_index(index, slot_->outputs.size(), "output");
  return slot_->output_in_place_refusal(index, memory);
}

void filling_slot::deliver_output(std::size_t index, const output_delivery& delivery, host_view view) {
  check_index(index, slot_->outputs.size(), "output");
  slot_->deliver_output(index, delivery, view == host_view::fetched);
}

pending_slot filling_slot::submit(stage_timing timing) && {
  nvtx3::scoped_range r{"ferry.submit"};
  // Refused before anything is enqueued: the slot goes back to the pool with this handle.
  slot_->check_indices_on_host();
  slot_->enqueue_pipeline(timing == stage_timing::events);
  return pending_slot(std::move(slot_));
}

// ---- pending_slot ----

completed_slot pending_slot::wait() && {
  slot_->wait_blocking();
  completed_slot done(std::move(slot_));
  // Thrown with the slot finished: it goes back to the pool with `done`, its answer unread.
  done.slot_->throw_index_violations();
  return done;
}

void pending_slot::wait_inputs_consumed() const {
  nvtx3::scoped_range r{"ferry.wait_inputs_consumed"};
  slot_->consumed_marker().synchronize_blocking();
}

pending_slot::~pending_slot() {
  if (!slot_) return;
  try {
    slot_->wait_blocking();  // never hand a slot with work in flight back to the pool
  } catch (const std::exception&) {
  }
}

// ---- completed_slot ----

std::span<const std::byte> completed_slot::output(std::string_view name) const {
  return output(find_index(slot_->outputs, name, "output"));
}
std::span<const std::byte> completed_slot::output(std::size_t index) const {
  check_index(index, slot_->outputs.size(), "output");
  const auto& t = slot_->outputs[index];
  if (!t.host_view_valid)
    throw unsupported("output '" + t.spec.name +
                      "' went to caller memory only for this request; its host view was not fetched");
  return t.buffer.host().first(t.spec.bytes());
}
std::size_t completed_slot::output_count() const noexcept { return slot_->outputs.size(); }
const tensor_spec& completed_slot::output_spec(std::size_t index) const {
  check_index(index, slot_->outputs.size(), "output");
  return slot_->outputs[index].spec;
}
stage_times completed_slot::times() const { return slot_->times(); }
int completed_slot::slot_index() const noexcept { return slot_->index; }
int completed_slot::ordinal() const noexcept { return slot_->ordinal(); }

void completed_slot::download_resident_outputs() {
  for (auto& t : slot_->outputs) {
    // An output that went to caller memory only has no result in its buffer's host view.
    if (t.host_view_valid && properties(t.buffer.strategy()).path == data_path::resident)
      t.buffer.download_blocking(slot_->work, t.spec.bytes());
  }
}

}  // namespace ferry
