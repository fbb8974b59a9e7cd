#include "session/slot.hpp"

#include <nvtx3/nvtx3.hpp>

#include <algorithm>
#include <chrono>
#include <string>

namespace ferry::detail {

graph_exec::~graph_exec() { FERRY_CUDA_TRY_NOTHROW(cudaGraphExecDestroy(exec_)); }
void graph_exec::launch(stream_ref s) const { FERRY_CUDA_TRY(cudaGraphLaunch(exec_, s.get())); }

std::unique_ptr<slot> slot::make(int index, engine& eng, const std::vector<tensor_spec>& io,
                                 const session_options& options, const device_caps& caps) {
  // Events and the engine's context belong to the device current when they are made; on a
  // multi-GPU host that must be the session's GPU, whatever the caller's is.
  const core::scoped_device on_device(caps.ordinal);
  return std::make_unique<slot>(index, eng, io, options, caps);
}

slot::slot(int slot_index, engine& eng, const std::vector<tensor_spec>& io, const session_options& options,
           const device_caps& caps)
    : index(slot_index), work(caps.ordinal) {
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
  context = eng.make_context(io);
  for (auto& t : inputs) context->bind(t.spec.name, t.buffer.device_address());
  for (auto& t : outputs) context->bind(t.spec.name, t.buffer.device_address());
  // Only paths the engine reads host memory on can free it before the engine is done; when every
  // input copies, they are free after their copies anyway.
  if (!inputs_copied_) engine_signals_consumed_ = context->signal_inputs_consumed(inputs_consumed_.get());
}

slot::~slot() {
  // Engine contexts free their device resources (cuBLAS handles, workspaces) on destruction;
  // let them do it on their own GPU.
  try {
    const auto on_device = work.activate();
    graph.reset();
    context.reset();
  } catch (const std::exception&) {  // cudaSetDevice failed and was logged; free them anyway
  }
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
  context->enqueue(s);  // in its own NVTX range, "ferry.engine" (engine_context)
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
    if (t.prefetches()) t.buffer.to_device(s);
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
    if (!t.prefetches()) t.buffer.to_device(s);
}

void slot::check_indices(stream_ref s) {
  for (auto& t : inputs)
    if (t.guard) t.guard->enqueue(t.engine_address(), s);
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
  if (engine_signals_consumed_) return consumed_mark::engine_event;
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
  for (auto& t : inputs) t.reset(*context);
  for (auto& t : outputs) t.reset(*context);
}

// ---- the pipeline, direct or as a graph ----

void slot::enqueue_pipeline(bool timed) {
  const auto on_device = work.activate();
  const auto began = std::chrono::steady_clock::now();
  timed_ = timed;
  // The checks write for the host only when a value is out of range: it starts from none.
  for (auto& t : inputs)
    if (t.guard) t.guard->reset();
  if (graph) {
    if (timed) start_.record(work);
    graph->launch(work);
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
      graph.emplace(exec);
    else
      failure = std::string("cudaGraphInstantiate: ") + cudaGetErrorName(inst);
  }
  if (g != nullptr) FERRY_CUDA_TRY_NOTHROW(cudaGraphDestroy(g));
  return failure;
}

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
  if (graph) {
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
