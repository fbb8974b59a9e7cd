#include "session/slot.hpp"

#include <nvtx3/nvtx3.hpp>

#include <algorithm>
#include <chrono>
#include <string>

namespace ferry::detail {

graph_exec::~graph_exec() { FERRY_CUDA_TRY_NOTHROW(cudaGraphExecDestroy(exec_)); }
void graph_exec::launch(stream_ref s) const { FERRY_CUDA_TRY(cudaGraphLaunch(exec_, s.get())); }

std::unique_ptr<slot> slot::make(int index, engine& eng, const std::vector<batch_shape>& shapes,
                                 const session_options& options, const device_caps& caps) {
  // Events and the engine's context belong to the device current when they are made; on a
  // multi-GPU host that must be the session's GPU, whatever the caller's is.
  const core::scoped_device on_device(caps.ordinal);
  return std::make_unique<slot>(index, eng, shapes, options, caps);
}

namespace {

// The specs of `io` with role `role`, in order: a slot's inputs or outputs.
std::vector<tensor_spec> of_role(const std::vector<tensor_spec>& io, tensor_role role) {
  std::vector<tensor_spec> picked;
  for (const auto& t : io)
    if (t.role == role) picked.push_back(t);
  return picked;
}

}  // namespace

slot::slot(int slot_index, engine& eng, const std::vector<batch_shape>& shapes, const session_options& options,
           const device_caps& caps)
    : index(slot_index), work(caps.ordinal) {
  make_buffers(shapes.back().io, options, caps);  // the full batch sizes the buffers
  make_contexts(eng, shapes);
}

void slot::make_buffers(const std::vector<tensor_spec>& io, const session_options& options, const device_caps& caps) {
  for (const auto& spec : io) {
    if (spec.is_dynamic())
      throw invalid_argument("tensor '" + spec.name +
                             "' has a dynamic dimension; resolve shapes before making a session");
    const bool is_input = spec.role == tensor_role::input;
    const buffer_request request{.bytes = spec.bytes(),
                                 .dir = is_input ? direction::input : direction::output,
                                 .managed_policy = options.managed_policy};
    auto buffer = io_buffer::allocate(strategy_for(options, spec.name), request, caps);
    if (is_input) {
      auto& input = inputs.emplace_back(spec, std::move(buffer));
      if (options.index_checks == index_check::on && spec.index_bound) input.guard.emplace(spec);
    } else
      outputs.emplace_back(spec, std::move(buffer));
  }
  const auto copy_path = [](const auto& t) { return properties(t.buffer.strategy()).path == data_path::copy; };
  const auto prefetched = [](const auto& t) { return t.buffer.strategy() == strategy_kind::managed_prefetch; };
  copies_ =
      std::any_of(inputs.begin(), inputs.end(), copy_path) || std::any_of(outputs.begin(), outputs.end(), copy_path);
  inputs_copied_ = std::all_of(inputs.begin(), inputs.end(), copy_path);
  prefetches_ =
      std::any_of(inputs.begin(), inputs.end(), prefetched) || std::any_of(outputs.begin(), outputs.end(), prefetched);
}

bool slot::bind_to_buffers(engine_context& c) {
  for (auto& t : inputs) c.bind(t.spec.name, t.buffer.device_address());
  for (auto& t : outputs) c.bind(t.spec.name, t.buffer.device_address());
  // Only paths the engine reads host memory on can free it before the engine is done; when every
  // input copies, they are free after their copies anyway.
  return !inputs_copied_ && c.signal_inputs_consumed(inputs_consumed_.get());
}

void slot::make_contexts(engine& eng, const std::vector<batch_shape>& shapes) {
  const bool signals = bind_to_buffers(*contexts.emplace_back(eng.make_context(shapes.back().io)));
  // One context for every size where the engine reshapes it (tried on the smallest size, then
  // back to the full one); else a context of each size's own, bound to the same buffers.
  shared_context_ = shapes.size() > 1 && contexts.front()->reshape(shapes.front().io);
  if (shared_context_ && !contexts.front()->reshape(shapes.back().io))
    throw error("the engine's context reshaped to a smaller batch but not back to its full one");
  for (const auto& shape : shapes) {
    slot_shape& made = shapes_.emplace_back();
    made.rows = shape.rows;
    made.io = shape.io;
    made.inputs = of_role(shape.io, tensor_role::input);
    made.outputs = of_role(shape.io, tensor_role::output);
    const bool own = !shared_context_ && &shape != &shapes.back();
    made.context = own ? contexts.emplace_back(eng.make_context(shape.io)).get() : contexts.front().get();
    made.engine_signals_consumed = own ? bind_to_buffers(*made.context) : signals;
  }
  current_ = context_shape_ = shapes_.size() - 1;
}

slot::~slot() {
  // Engine contexts free their device resources (cuBLAS handles, workspaces) on destruction;
  // let them do it on their own GPU.
  try {
    const auto on_device = work.activate();
    drop_graphs();
    shapes_.clear();
    contexts.clear();
  } catch (const std::exception&) {  // cudaSetDevice failed and was logged; free them anyway
  }
}

void slot::select_shape(std::size_t shape) {
  if (shape == current_) return;
  if (std::any_of(inputs.begin(), inputs.end(), [](const slot_input& t) { return t.fed_by_caller(); }) ||
      std::any_of(outputs.begin(), outputs.end(),
                  [](const slot_output& t) { return t.bound_address != nullptr || !t.deliveries.empty(); }))
    throw invalid_argument("a request's batch size is chosen before its caller memory is given, not after");
  const slot_shape& to = shapes_.at(shape);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    inputs[i].spec = to.inputs[i];
    if (inputs[i].guard) inputs[i].guard->reshape(to.inputs[i]);
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) outputs[i].spec = to.outputs[i];
  current_ = shape;
}

void slot::reshape_context() {
  if (!shared_context_ || context_shape_ == current_) return;
  if (!contexts.front()->reshape(shapes_[current_].io))
    throw error("the engine's context refused a batch size it took when the session was made");
  context_shape_ = current_;
}

// ---- one request, in stream order ----

void slot::enqueue_stages(bool timed) {
  const stream_ref s = work;
  issue_prefetches(s);
  stage_events_ = copies_ || moves_caller_bytes();
  // Inputs read in place (caller memory, or host or managed memory under some input's strategy)
  // are consumed only once the engine has run; copied ones once their copies are done.
  const bool after_copies = inputs_copied_ && !reads_caller_memory_in_place();
  consumed_ = plan_consumed(after_copies, timed);
  if (timed) start_.record(s);
  copy_in(s);
  check_indices(s);  // part of getting the inputs ready, so of the h2d stage where there is one
  if (timed && stage_events_) after_h2d_.record(s);
  if (after_copies) mark_consumed(s);
  reshape_context();
  context().enqueue(s);  // in its own NVTX range, "ferry.engine" (engine_context)
  if (timed) after_compute_.record(s);
  if (!after_copies) mark_consumed(s);
  copy_out(s);
  if (timed && stage_events_) end_.record(s);
}

void slot::issue_prefetches(stream_ref s) {
  // A managed prefetch goes first, on the idle stream: the driver then migrates the pages at
  // once, where behind an event recorded on the same stream it takes a slower path
  // (docs/RESULTS.md). Its host time is (part of) the h2d stage. Gathers and caller memory
  // standing in for a prefetch are copies, timed by the events.
  if (!prefetches_) return;
  const auto began = std::chrono::steady_clock::now();
  nvtx3::scoped_range r{"ferry.to_device"};
  for (auto& t : inputs)
    if (t.prefetches()) t.to_device(s);
  for (auto& t : outputs)
    if (t.prefetches()) t.buffer.to_device(s, t.spec.bytes());
  prefetch_us_ = std::chrono::duration<float, std::micro>(std::chrono::steady_clock::now() - began).count();
}

void slot::copy_in(stream_ref s) {
  nvtx3::scoped_range r{"ferry.to_device"};
  for (auto& t : inputs)
    if (!t.prefetches()) t.to_device(s);
  // Outputs get to_device too, which no strategy uses today (copy strategies move an output only
  // device -> host, managed-prefetch keeps outputs in host pages), so a strategy that needs it
  // later finds it in stream order.
  for (auto& t : outputs)
    if (!t.prefetches()) t.buffer.to_device(s, t.spec.bytes());
}

namespace {

// Index inputs up to this size that the CPU wrote into the slot's host view are checked there at
// submit (1-2 us for 16x128 ids on the H200 host) instead of by a kernel (about 5 us of the GPU's
// timeline and a launch); larger ones, and every one the caller fed, on the GPU.
constexpr std::size_t host_index_check_bytes = std::size_t{64} << 10;

bool checked_on_host(const slot_input& t) noexcept {
  return t.guard && !t.fed_by_caller() && t.spec.bytes() <= host_index_check_bytes;
}

}  // namespace

void slot::check_indices_on_host() const {
  for (const auto& t : inputs)
    if (checked_on_host(t))
      if (auto v = find_index_violation(t.buffer.host().first(t.spec.bytes()), t.spec, t.spec.shape))
        throw index_out_of_range(std::move(*v));
}

void slot::check_indices(stream_ref s) {
  for (auto& t : inputs)
    if (t.guard && !checked_on_host(t)) t.guard->enqueue(t.engine_address(), s);
}

void slot::throw_index_violations() const {
  for (const auto& t : inputs)
    if (t.guard)
      if (auto v = t.guard->violation()) throw index_out_of_range(std::move(*v));
}

void slot::copy_out(stream_ref s) {
  nvtx3::scoped_range r{"ferry.to_host"};
  for (auto& t : outputs) t.to_host(s);
}

consumed_mark slot::plan_consumed(bool after_copies, bool timed) const noexcept {
  if (after_copies) return timed && stage_events_ ? consumed_mark::h2d_event : consumed_mark::own_event;
  if (shapes_[current_].engine_signals_consumed) return consumed_mark::engine_event;
  return timed ? consumed_mark::compute_event : consumed_mark::own_event;
}

void slot::mark_consumed(stream_ref s) {
  if (consumed_ != consumed_mark::own_event) return;  // a stage event or the engine marks it
  // Captured into the graph as its own node, so each launch marks the point again; otherwise
  // wait_inputs_consumed() on a graph slot would wait for an event that was never recorded.
  if (capturing_)
    inputs_consumed_.record_in_capture(s);
  else
    inputs_consumed_.record(s);
}

const event& slot::consumed_marker() const noexcept {
  switch (consumed_) {
    case consumed_mark::h2d_event:
      return after_h2d_;
    case consumed_mark::compute_event:
      return after_compute_;
    case consumed_mark::own_event:
    case consumed_mark::engine_event:
      break;
  }
  return inputs_consumed_;
}

bool slot::moves_caller_bytes() const noexcept {
  return std::any_of(inputs.begin(), inputs.end(), [](const slot_input& t) { return t.gathered.has_value(); }) ||
         std::any_of(outputs.begin(), outputs.end(), [](const slot_output& t) { return !t.deliveries.empty(); });
}

bool slot::reads_caller_memory_in_place() const noexcept {
  return std::any_of(inputs.begin(), inputs.end(), [](const slot_input& t) { return t.bound_address != nullptr; });
}

void slot::reset_tensors() {
  for (auto& t : inputs) t.reset(context());
  for (auto& t : outputs) t.reset(context());
}

// ---- the pipeline, direct or as a graph ----

void slot::enqueue_pipeline(bool timed) {
  const auto on_device = work.activate();
  const auto began = std::chrono::steady_clock::now();
  timed_ = timed;
  // The checks write for the host only when a value is out of range: it starts from none.
  for (auto& t : inputs)
    if (t.guard) t.guard->reset();
  if (const auto& g = graph()) {
    if (timed) start_.record(work);
    g->launch(work);
    if (timed) end_.record(work);
  } else {
    enqueue_stages(timed);
  }
  enqueue_us_ = std::chrono::duration<float, std::micro>(std::chrono::steady_clock::now() - began).count();
}

std::optional<std::string> slot::capture_graph() {
  const auto on_device = work.activate();
  // Thread-local capture: other clients' threads keep issuing ordinary CUDA calls meanwhile.
  FERRY_CUDA_TRY(cudaStreamBeginCapture(work.ref().get(), cudaStreamCaptureModeThreadLocal));
  std::optional<std::string> failure;
  capturing_ = true;
  try {
    reshape_context();  // outside the capture would do too: it enqueues nothing
    enqueue_stages(false);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  capturing_ = false;
  cudaGraph_t g = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(work.ref().get(), &g);
  (void)cudaGetLastError();
  if (!failure && ended != cudaSuccess)
    failure = std::string("cudaStreamEndCapture: ") + cudaGetErrorName(ended) + " (" + cudaGetErrorString(ended) + ")";
  if (!failure) {
    cudaGraphExec_t exec = nullptr;
    const cudaError_t inst = cudaGraphInstantiate(&exec, g, 0);
    (void)cudaGetLastError();
    if (inst == cudaSuccess)
      shapes_[current_].graph.emplace(exec);
    else
      failure = std::string("cudaGraphInstantiate: ") + cudaGetErrorName(inst);
  }
  if (g != nullptr) FERRY_CUDA_TRY_NOTHROW(cudaGraphDestroy(g));
  return failure;
}

std::optional<std::string> slot::capture_graphs() {
  std::optional<std::string> failure;
  for (std::size_t k = 0; k < shapes_.size() && !failure; ++k) {
    select_shape(k);
    failure = capture_graph();
  }
  select_shape(shapes_.size() - 1);
  if (failure) drop_graphs();
  return failure;
}

void slot::drop_graphs() noexcept {
  for (auto& shape : shapes_) shape.graph.reset();
}

std::optional<std::string> slot::use_own_graphs(int per_size) {
  // A shared context keeps a graph per size: its bound grows with them.
  const int bound = shared_context_ ? per_size * static_cast<int>(shapes_.size()) : per_size;
  for (const auto& c : contexts) {
    if (auto refusal = c->use_own_graphs(bound)) {
      for (const auto& d : contexts) (void)d->use_own_graphs(0);
      return refusal;
    }
  }
  return std::nullopt;
}

std::optional<std::string> slot::own_graphs_failure() const {
  for (const auto& c : contexts)
    if (auto failure = c->own_graphs_failure()) return failure;
  return std::nullopt;
}

std::optional<std::string> slot::capture_refusal() const { return contexts.front()->capture_refusal(); }

void slot::wait_blocking() {
  nvtx3::scoped_range r{"ferry.wait"};
  // One stream: its work finishing means the request is complete, but for the host-side step
  // some outputs end with (staged: staging -> host view).
  work.synchronize_blocking();
  for (auto& t : outputs) t.buffer.finish_to_host();
}

stage_times slot::times() const {
  stage_times t;
  t.enqueue_us = enqueue_us_;
  if (!timed_) return t;
  if (graph()) {
    t.total_ms = elapsed_ms(start_, end_);
    return t;
  }
  if (stage_events_) {
    t.h2d_ms = elapsed_ms(start_, after_h2d_);
    t.compute_ms = elapsed_ms(after_h2d_, after_compute_);
    t.d2h_ms = elapsed_ms(after_compute_, end_);
    t.total_ms = elapsed_ms(start_, end_);
  } else {
    t.compute_ms = elapsed_ms(start_, after_compute_);
    t.total_ms = *t.compute_ms;
  }
  if (prefetches_) {
    // The prefetches ran before the first event, on the host's clock (issue_prefetches); beside
    // other tensors' copies they are part of the same h2d stage.
    const float prefetch_ms = prefetch_us_ / 1000.0F;
    t.h2d_ms = t.h2d_ms.value_or(0.0F) + prefetch_ms;
    t.total_ms += prefetch_ms;
  }
  return t;
}

}  // namespace ferry::detail
