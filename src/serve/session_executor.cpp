#include "serve/session_executor.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <chrono>
#include <optional>

#include "ferry/buffer.hpp"
#include "ferry/builtin.hpp"
#include "ferry/error.hpp"
#include "ferry/model_engine.hpp"
#include "ferry/session.hpp"
#include "serve/batch_io.hpp"
#include "serve/input_routing.hpp"
#include "serve/output_routing.hpp"

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
                                             .backend_directories = backend_directories});
  builtin_options options{.input_bytes = config.input_bytes, .batch = std::max<std::int64_t>(1, config.max_batch)};
  return make_builtin_engine(config.engine, options);
}

// The concrete I/O every session of the model binds: the declared shapes, batch = max_batch.
std::vector<tensor_spec> concrete_io(const engine& eng, const model_signature& signature) {
  std::vector<shape_binding> shapes;
  for (const auto& in : signature.inputs) {
    shape_binding b{in.name, in.shape};
    if (signature.max_batch > 0) b.dims.front() = signature.max_batch;
    shapes.push_back(std::move(b));
  }
  return eng.resolve(shapes);
}

struct instance {
  device_caps caps;
  std::unique_ptr<session> s;
  // What the caller-memory rule needs for each input and output: tensors may go by different
  // strategies (the model's tensor_strategies), so each has its own.
  std::vector<slot_facts> input_facts, output_facts;
};

std::vector<slot_facts> facts_of(const session& s, const device_caps& caps, tensor_role role) {
  std::vector<slot_facts> facts;
  for (const auto& spec : s.io())
    if (spec.role == role)
      facts.push_back({.strategy = s.strategy_of(spec.name), .device = caps.ordinal, .graph_active = s.graph().active});
  return facts;
}

class session_executor final : public executor {
 public:
  session_executor(const model_config& config, const std::vector<device_caps>& gpus,
                   const std::vector<std::filesystem::path>& backend_directories)
      : inflight_(config.inflight) {
    for (const auto& caps : gpus) {
      FERRY_CUDA_TRY(cudaSetDevice(caps.ordinal));
      engines_.push_back(make_engine(config, caps.ordinal, backend_directories));
      engine& eng = *engines_.back();
      if (io_.empty()) {
        io_ = eng.io();
        signature_ = make_signature(io_, config.max_batch, config.name);
      }
      const auto io = concrete_io(eng, signature_);
      if (outputs_.empty())
        for (const auto& spec : io)
          if (spec.role == tensor_role::output) outputs_.push_back(spec);
      const session_options options{
          .strategy = config.strategy, .inflight = config.inflight, .tensor_strategies = config.tensor_strategies};
      for (int i = 0; i < config.instances_per_gpu; ++i) {
        auto s = std::make_unique<session>(eng, io, options, caps);
        auto inputs = facts_of(*s, caps, tensor_role::input);
        auto outputs = facts_of(*s, caps, tensor_role::output);
        instances_.push_back({caps, std::move(s), std::move(inputs), std::move(outputs)});
        instances_.back().s->warmup();
      }
      gpu_names_ += (gpu_names_.empty() ? "" : ", ") + fmt::format("GPU {} ({})", caps.ordinal, caps.name);
    }
    const std::string overrides = tensor_strategies_text(config.tensor_strategies);
    platform_ = fmt::format("ferry_gpu: {}, strategy {}{}, {} instance(s) x {} slot(s)", gpu_names_,
                            to_string(config.strategy), overrides.empty() ? "" : " (" + overrides + ")",
                            instances_.size(), inflight_);
  }

  [[nodiscard]] const std::vector<tensor_spec>& io() const override { return io_; }
  [[nodiscard]] int workers() const override { return static_cast<int>(instances_.size()) * inflight_; }
  [[nodiscard]] std::optional<int> worker_device(int worker) const override {
    return instance_of(worker).caps.ordinal;
  }
  [[nodiscard]] std::string platform() const override { return platform_; }

  batch_timing execute(std::span<batch_item> batch, int worker) override {
    instance& inst = instance_of(worker);
    FERRY_CUDA_TRY(cudaSetDevice(inst.caps.ordinal));
    check_cuda_inputs_on(batch, inst.caps.ordinal);
    batch_timing timing;
    auto start = std::chrono::steady_clock::now();
    filling_slot slot = inst.s->acquire();
    for (std::size_t i = 0; i < slot.input_count(); ++i) {
      switch (route_input(batch, i, slot.input_spec(i), inst.input_facts.at(i))) {
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
    const output_plan plan = plan_outputs(batch, signature_, outputs_, inst.output_facts);
    for (const output_step& step : plan.steps) {
      if (step.route == output_route::response) continue;
      const std::span<std::byte> range = batch[step.item].output_destinations[step.k].bytes.first(step.bytes);
      if (step.route == output_route::bind_in_place) {
        slot.bind_caller_output(step.output, range);
      } else {
        const auto view = plan.host_view_needed[step.output] ? filling_slot::host_view::fetched
                                                             : filling_slot::host_view::skipped;
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
    std::vector<std::span<const std::byte>> host_views(outputs_.size());
    for (std::size_t i = 0; i < outputs_.size(); ++i)
      if (plan.host_view_needed[i]) host_views[i] = done.output(i);
    answer_outputs(batch, plan, outputs_, host_views, signature_.max_batch > 0);
    timing.compute_output_ns = ns_since(start) + d2h;
    return timing;
  }

 private:
  // Worker w drives instance w / inflight: `inflight` workers keep one session's slots busy.
  [[nodiscard]] instance& instance_of(int worker) {
    return instances_.at(static_cast<std::size_t>(worker / inflight_));
  }
  [[nodiscard]] const instance& instance_of(int worker) const {
    return instances_.at(static_cast<std::size_t>(worker / inflight_));
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

  int inflight_;
  std::vector<tensor_spec> io_;
  model_signature signature_;
  std::vector<tensor_spec> outputs_;  // the concrete outputs every session runs with
  std::string gpu_names_, platform_;
  std::vector<std::unique_ptr<engine>> engines_;  // outlive the sessions (destroyed after them)
  std::vector<instance> instances_;
};

}  // namespace

std::unique_ptr<executor> make_session_executor(const model_config& config, const std::vector<device_caps>& gpus,
                                                const std::vector<std::filesystem::path>& backend_directories) {
  return std::make_unique<session_executor>(config, gpus, backend_directories);
}

}  // namespace ferry::serve
