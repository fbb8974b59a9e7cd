#include "serve/execution/session_executor.hpp"

#include <fmt/format.h>

#include <chrono>
#include <optional>

#include "ferry/core/byte_size.hpp"

#include "core/scoped_device.hpp"
#include "ferry/core/error.hpp"
#include "ferry/engines/builtin.hpp"
#include "ferry/engines/model_engine.hpp"
#include "ferry/memory/buffer.hpp"
#include "ferry/session/replica_set.hpp"
#include "ferry/session/session.hpp"
#include "serve/config/load_check.hpp"
#include "serve/execution/batch_buckets.hpp"
#include "serve/execution/batch_io.hpp"
#include "serve/execution/bucket_timing.hpp"
#include "serve/execution/input_routing.hpp"
#include "serve/execution/output_routing.hpp"

namespace ferry::serve {
namespace {

std::uint64_t ns_since(std::chrono::steady_clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}

std::uint64_t ms_to_ns(const std::optional<float>& ms) {
  return ms ? static_cast<std::uint64_t>(static_cast<double>(*ms) * 1e6) : 0;
}

std::unique_ptr<engine> make_engine(const model_config& config, int device,
                                    const std::vector<std::filesystem::path>& backend_directories) {
  if (is_model_engine_spec(config.engine))
    return load_model_engine(config.engine, {.device = device,
                                             .max_concurrency = config.inflight * config.instances_per_gpu,
                                             .backend_directories = backend_directories,
                                             .index_bounds = config.index_bounds});
  builtin_options options{.input_bytes = config.input_bytes, .batch = std::max<std::int64_t>(1, config.max_batch)};
  return make_builtin_engine(config.engine, options);
}

// The concrete shapes every session of the model binds: the declared shapes, batch = max_batch (a
// batch of fewer rows runs in their first rows, at its bucket).
std::vector<shape_binding> concrete_shapes(const model_signature& signature) {
  std::vector<shape_binding> shapes;
  for (const auto& in : signature.inputs) {
    shape_binding b{in.name, in.shape};
    if (signature.max_batch > 0) b.dims.front() = signature.max_batch;
    shapes.push_back(std::move(b));
  }
  return shapes;
}

// What the caller-memory rule needs for each input and output of one GPU's session: tensors may
// go by different strategies (the model's tensor_strategies), so each has its own.
struct gpu_facts {
  int device = 0;
  std::vector<slot_facts> inputs, outputs;
};

std::vector<slot_facts> facts_of(const session& s, int device, tensor_role role) {
  std::vector<slot_facts> facts;
  for (const auto& spec : s.io())
    if (spec.role == role)
      // Only the session's own capture of a slot's pipeline fixes its addresses; graphs an engine
      // captures of its own run are keyed by the bound addresses, so caller memory still binds.
      facts.push_back({.strategy = s.strategy_of(spec.name),
                       .device = device,
                       .graph_active = s.graph().active && s.graph().kind == graph_kind::pipeline});
  return facts;
}

// What the model's platform says of its CUDA graphs ("graph": true), read after warm-up (the
// engine's own graphs are captured on it): every replica runs the same engine, so the first speaks
// for all.
std::string graphs_text(const graph_status& g) {
  if (!g.active) return "no CUDA graphs (" + g.reason + ")";
  const std::string kind =
      g.kind == graph_kind::engine ? "CUDA graphs captured by the engine" : "CUDA graphs of each slot's pipeline";
  return g.measured ? kind + " (" + describe(*g.measured) + ")" : kind;
}

// The library's replica set: per GPU one engine and one session, the same concrete I/O on every
// GPU, peer access between them. A model's `instances_per_gpu` instances of `inflight` slots are
// that GPU's session with instances x inflight slots: each slot has its own stream and engine
// context, which is what an instance is; the scheduler's workers are those slots, one each.
// What make_replicas learnt beside the sessions: the batch sizes they run at and the GPU memory
// they took (buffers, contexts, per-bucket graphs and workspaces: free memory before and after).
struct replica_facts {
  std::vector<std::int64_t> buckets;
  std::size_t device_bytes = 0;
};

std::unique_ptr<replica_set> make_replicas(const model_config& config, const std::vector<device_caps>& gpus,
                                           const std::vector<std::filesystem::path>& backend_directories,
                                           model_signature& signature, std::vector<tensor_spec>& declared,
                                           replica_facts& facts) {
  if (gpus.empty()) throw invalid_argument("model '" + config.name + "': no GPU to run it on");
  // The first GPU's engine is made first: its declared I/O gives the shapes every replica binds.
  std::unique_ptr<engine> first;
  {
    const core::scoped_device on_device(gpus.front().ordinal);
    first = make_engine(config, gpus.front().ordinal, backend_directories);
  }
  declared = first->io();
  signature = make_signature(declared, config.max_batch, config.name);
  facts.buckets = session_buckets(config.max_batch, config.batch_buckets, *first);
  const auto shapes = concrete_shapes(signature);
  std::size_t bytes_per_slot = 0;  // every slot's buffers, checked before any is made
  for (const auto& t : first->resolve(shapes)) bytes_per_slot += t.bytes();
  check_session_buffers(config, bytes_per_slot, gpus);
  const session_options options{.strategy = config.strategy,
                                .inflight = config.inflight * config.instances_per_gpu,
                                .graph = config.graph,
                                .tensor_strategies = config.tensor_strategies,
                                .batch_sizes = facts.buckets.size() > 1 ? facts.buckets : std::vector<std::int64_t>{}};
  const std::size_t free_before = query_free_memory(gpus.front().ordinal);
  auto set = std::make_unique<replica_set>(
      gpus,
      [&](int device) {
        if (first) return std::move(first);  // the replica set asks for the first GPU's first
        return make_engine(config, device, backend_directories);
      },
      shapes, options);
  // Values the model takes (never garbage in an integer input: a bad id would lose the GPU). Every
  // bucket warms up (and its graphs are captured) now, so the memory they take is taken at load.
  set->warmup(3, input_data::parse(config.warmup_data));
  const std::size_t free_after = query_free_memory(gpus.front().ordinal);
  facts.device_bytes = free_before > free_after ? free_before - free_after : 0;
  return set;
}

class session_executor final : public executor {
 public:
  session_executor(const model_config& config, const std::vector<device_caps>& gpus,
                   const std::vector<std::filesystem::path>& backend_directories)
      : slots_per_gpu_(config.inflight * config.instances_per_gpu),
        replicas_(make_replicas(config, gpus, backend_directories, signature_, io_, replica_facts_)) {
    for (const auto& spec : replicas_->io())
      if (spec.role == tensor_role::output) outputs_.push_back(spec);
    std::string gpu_names;
    for (std::size_t r = 0; r < replicas_->size(); ++r) {
      const session& s = replicas_->replica(r);
      const int device = replicas_->devices()[r];
      facts_.push_back({device, facts_of(s, device, tensor_role::input), facts_of(s, device, tensor_role::output)});
      gpu_names += (gpu_names.empty() ? "" : ", ") + fmt::format("GPU {} ({})", device, gpus[r].name);
    }
    const std::vector<std::int64_t>& sizes = replica_facts_.buckets;
    const auto times =
        sizes.empty() ? std::vector<std::chrono::nanoseconds>{} : measure_run_times(replicas_->replica(0), sizes);
    for (std::size_t b = 0; b < sizes.size(); ++b) {
      buckets_.push_back({sizes[b], times[b]});
      bucket_outputs_.push_back(outputs_);
      for (auto& out : bucket_outputs_.back()) out.shape.front() = sizes[b];
    }
    const std::string overrides = tensor_strategies_text(config.tensor_strategies);
    platform_ = fmt::format("ferry_gpu: {}, strategy {}{}, {} instance(s) x {} slot(s){}{}, {} of GPU memory at load",
                            gpu_names, to_string(config.strategy), overrides.empty() ? "" : " (" + overrides + ")",
                            replicas_->size() * static_cast<std::size_t>(config.instances_per_gpu), config.inflight,
                            config.graph != graph_mode::off ? ", " + graphs_text(replicas_->replica(0).graph()) : "",
                            sizes.empty() ? "" : ", " + describe_buckets(sizes, times),
                            format_byte_size(replica_facts_.device_bytes));
  }

  [[nodiscard]] const std::vector<tensor_spec>& io() const override { return io_; }
  [[nodiscard]] int workers() const override { return static_cast<int>(replicas_->size()) * slots_per_gpu_; }
  [[nodiscard]] std::optional<int> worker_device(int worker) const override { return facts_of_worker(worker).device; }
  [[nodiscard]] std::string platform() const override { return platform_; }
  [[nodiscard]] std::vector<batch_bucket> buckets() const override { return buckets_; }

  batch_timing execute(std::span<batch_item> batch, int worker) override {
    const gpu_facts& facts = facts_of_worker(worker);
    const core::scoped_device on_device(facts.device);
    check_cuda_inputs_on(batch, facts.device);
    batch_timing timing;
    auto start = std::chrono::steady_clock::now();
    // This GPU's session has one slot per worker of the GPU, so a slot is always free here.
    filling_slot slot = replicas_->replica(replica_of(worker)).acquire();
    // The batch runs at its bucket, chosen before the slot is filled; outputs are that bucket's.
    const std::size_t bucket = run_at_bucket(slot, total_rows(batch), timing);
    const std::vector<tensor_spec>& outputs = bucket_outputs_.empty() ? outputs_ : bucket_outputs_[bucket];
    for (std::size_t i = 0; i < slot.input_count(); ++i) {
      switch (route_input(batch, i, slot.input_spec(i), facts.inputs.at(i))) {
        case input_route::caller_host:
        case input_route::caller_device:
          slot.use_caller_input(i, batch.front().request->inputs[i].data);
          break;
        case input_route::gather_on_device:
          slot.gather_input(i, gather_pieces(batch, i));
          break;
        case input_route::gather_on_host:
          gather_input(batch, i, slot.input(i), gathered_for::device);
          break;
      }
    }
    const output_plan plan = plan_outputs(batch, signature_, outputs, facts.outputs);
    for (const output_step& step : plan.steps) {
      if (step.route == output_route::response) continue;
      const std::span<std::byte> range = batch[step.item].output_destinations[step.k].bytes.first(step.bytes);
      if (step.route == output_route::bind_in_place) {
        slot.bind_caller_output(step.output, range);
      } else {
        const auto view =
            plan.host_view_needed[step.output] ? filling_slot::host_view::fetched : filling_slot::host_view::skipped;
        slot.deliver_output(step.output, {step.offset, range}, view);
      }
    }
    slot.upload_resident_inputs();
    timing.compute_input_ns = ns_since(start);

    start = std::chrono::steady_clock::now();
    completed_slot done = std::move(slot).submit().wait();
    done.download_resident_outputs();
    const std::uint64_t run_ns = ns_since(start);
    const stage_times stages = done.times();
    // The stage events bracket every copy of the request on the slot's stream: the strategy's,
    // the gathers from shared memory, and the deliveries into it. Triton counts them as moving
    // inputs in and outputs out.
    const std::uint64_t h2d = ms_to_ns(stages.h2d_ms);
    const std::uint64_t d2h = ms_to_ns(stages.d2h_ms);
    timing.compute_input_ns += h2d;
    timing.compute_infer_ns = run_ns > h2d + d2h ? run_ns - h2d - d2h : run_ns;

    start = std::chrono::steady_clock::now();
    std::vector<std::span<const std::byte>> host_views(outputs.size());
    for (std::size_t i = 0; i < outputs.size(); ++i)
      if (plan.host_view_needed[i]) host_views[i] = done.output(i);
    answer_outputs(batch, plan, outputs, host_views, signature_.max_batch > 0);
    timing.compute_output_ns = ns_since(start) + d2h;
    return timing;
  }

 private:
  // Worker w drives a slot of replica w / slots_per_gpu: each GPU's workers keep its slots busy.
  [[nodiscard]] std::size_t replica_of(int worker) const { return static_cast<std::size_t>(worker / slots_per_gpu_); }
  [[nodiscard]] const gpu_facts& facts_of_worker(int worker) const { return facts_.at(replica_of(worker)); }

  // Runs `slot` at the smallest bucket that holds `rows` (sessions without batch sizes run their
  // one size), saying the rows it runs in `timing`; returns the bucket's index.
  std::size_t run_at_bucket(filling_slot& slot, std::int64_t rows, batch_timing& timing) const {
    if (buckets_.empty()) return 0;
    std::vector<std::int64_t> sizes;
    for (const auto& b : buckets_) sizes.push_back(b.rows);
    const std::size_t bucket = bucket_index(sizes, rows);
    timing.run_rows = buckets_[bucket].rows;
    if (buckets_.size() > 1) slot.run_at_rows(timing.run_rows);
    return bucket;
  }

  // Input `index` of every item, one after another: the ranges filling_slot::gather_input copies.
  static std::vector<gather_piece> gather_pieces(std::span<const batch_item> batch, std::size_t index) {
    std::vector<gather_piece> pieces;
    std::size_t offset = 0;
    for (const auto& item : batch) {
      const std::span<const std::byte> data = item.request->inputs.at(index).data;
      pieces.push_back({data, offset});
      offset += data.size();
    }
    return pieces;
  }

  int slots_per_gpu_;
  std::vector<tensor_spec> io_;  // declared (dynamic dims as such): what metadata reports
  model_signature signature_;
  replica_facts replica_facts_;  // filled by make_replicas: declared before replicas_, made first
  std::unique_ptr<replica_set> replicas_;
  std::vector<tensor_spec> outputs_;                      // the concrete outputs every session runs with (max_batch)
  std::vector<batch_bucket> buckets_;                     // the batch sizes runs take, ascending, with their run times
  std::vector<std::vector<tensor_spec>> bucket_outputs_;  // per bucket: the outputs at its rows
  std::vector<gpu_facts> facts_;                          // per replica
  std::string platform_;
};

}  // namespace

std::unique_ptr<executor> make_session_executor(const model_config& config, const std::vector<device_caps>& gpus,
                                                const std::vector<std::filesystem::path>& backend_directories) {
  return std::make_unique<session_executor>(config, gpus, backend_directories);
}

}  // namespace ferry::serve
