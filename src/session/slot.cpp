#include "session/slot.hpp"

#include <nvtx3/nvtx3.hpp>

#include <chrono>
#include <cstdint>
#include <string>

#include "core/scoped_device.hpp"

namespace ferry::detail {

graph_exec::~graph_exec() { FERRY_CUDA_TRY_NOTHROW(cudaGraphExecDestroy(exec_)); }
void graph_exec::launch(stream_ref s) const { FERRY_CUDA_TRY(cudaGraphLaunch(exec_, s.get())); }

slot::slot(int slot_index, engine& eng, const std::vector<tensor_spec>& io,
           const session_options& options, const device_caps& caps)
    : index(slot_index),
      device(caps.ordinal),
      copies(properties(options.strategy).path == data_path::copy),
      prefetches(options.strategy == strategy_kind::managed_prefetch) {
  for (const auto& spec : io) {
    if (spec.is_dynamic())
      throw invalid_argument("tensor '" + spec.name +
                             "' has a dynamic dimension; resolve shapes before making a session");
    const bool is_input = spec.role == tensor_role::input;
    const buffer_request request{.bytes = spec.bytes(),
                                 .dir = is_input ? direction::input : direction::output,
                                 .managed_policy = options.managed_policy};
    auto buffer = io_buffer::allocate(options.strategy, request, caps);
    (is_input ? input_specs : output_specs).push_back(spec);
    (is_input ? inputs : outputs).push_back(std::move(buffer));
  }
  caller_inputs.resize(inputs.size());
  context = eng.make_context(io);
  for (std::size_t i = 0; i < inputs.size(); ++i) context->bind(input_specs[i].name, inputs[i].device());
  for (std::size_t i = 0; i < outputs.size(); ++i)
    context->bind(output_specs[i].name, outputs[i].device());
  // Only paths the engine reads host memory on can free it before the engine is done; copy
  // paths free it after their copy anyway.
  if (!copies) engine_signals_consumed = context->signal_inputs_consumed(inputs_consumed.get());
}

void slot::enqueue_stages(bool with_timing) {
  const stream_ref s = work;
  // A managed prefetch goes first, on the idle stream: the driver then migrates the pages at
  // once. Behind an event recorded on the same stream it took a slower path (19 MB: 584 us
  // against the hand-written recipe's whole request of 455 us, on the H200 host). Its host time
  // is the h2d stage.
  if (prefetches) {
    const auto began = std::chrono::steady_clock::now();
    nvtx3::scoped_range r{"ferry.to_device"};
    for (std::size_t i = 0; i < inputs.size(); ++i) input_to_device(i, s);
    for (auto& b : outputs) b.to_device(s);
    prefetch_us = std::chrono::duration<float, std::micro>(std::chrono::steady_clock::now() - began).count();
  }
  if (with_timing) start.record(s);
  // Inputs read in place from caller memory are consumed only once the engine has run.
  const bool consumed_after_copy = copies && !reads_caller_memory_in_place();
  if (!prefetches) {
    nvtx3::scoped_range r{"ferry.to_device"};
    // Outputs get to_device too, which no strategy uses today (copy strategies move an output
    // only device -> host, managed-prefetch keeps outputs in host pages), so a strategy that
    // needs it later finds it in stream order.
    for (std::size_t i = 0; i < inputs.size(); ++i) input_to_device(i, s);
    for (auto& b : outputs) b.to_device(s);
  }
  if (copies && with_timing) after_h2d.record(s);
  if (consumed_after_copy) {
    if (with_timing) {
      consumed_marker = &after_h2d;
    } else {
      inputs_consumed.record(s);
      consumed_marker = &inputs_consumed;
    }
  }
  {
    nvtx3::scoped_range r{"ferry.engine"};
    context->enqueue(s);
  }
  if (with_timing) after_compute.record(s);
  if (!consumed_after_copy) {
    if (engine_signals_consumed) {
      consumed_marker = &inputs_consumed;  // the engine records it when it has read them
    } else if (with_timing) {
      consumed_marker = &after_compute;
    } else {
      inputs_consumed.record(s);
      consumed_marker = &inputs_consumed;
    }
  }
  {
    nvtx3::scoped_range r{"ferry.to_host"};
    for (auto& b : outputs) b.to_host(s);
  }
  if (copies && with_timing) end.record(s);
}

void slot::input_to_device(std::size_t i, stream_ref s) {
  const auto& caller = caller_inputs[i];
  if (!caller) {
    inputs[i].to_device(s);
    return;
  }
  if (caller->device_view != nullptr) return;  // zero-copy: the engine reads the caller's memory
  FERRY_CUDA_TRY(cudaMemcpyAsync(inputs[i].device(), caller->host, inputs[i].bytes(), cudaMemcpyHostToDevice, s.get()));
}

namespace {

// Caller memory the engine is bound to in place must meet the binding alignment (TensorRT's 256
// bytes); checked here so the slot is left as it was and the message says what to change.
void require_bindable(const tensor_spec& spec, const void* address) {
  if (reinterpret_cast<std::uintptr_t>(address) % device_alignment != 0)
    throw invalid_argument("input '" + spec.name + "': caller memory would be read in place, but its address is not " +
                           std::to_string(device_alignment) + "-byte aligned; start the tensor at an aligned offset");
}

}  // namespace

void slot::use_caller_input(std::size_t i, std::span<const std::byte> memory) {
  const tensor_spec& spec = input_specs[i];
  if (memory.size() != inputs[i].bytes())
    throw invalid_argument("input '" + spec.name + "': caller memory is " + std::to_string(memory.size()) +
                           " bytes, the tensor is " + std::to_string(inputs[i].bytes()));
  if (graph)
    throw unsupported("input '" + spec.name + "': this slot runs as a captured CUDA graph, whose addresses are fixed");
  // Both ends of the range: registrations and allocations are whole ranges, so the same kind of
  // memory at each end means the caller's range is (at least) that memory.
  cudaPointerAttributes first{}, last{};
  const bool known = cudaPointerGetAttributes(&first, memory.data()) == cudaSuccess &&
                     cudaPointerGetAttributes(&last, memory.data() + memory.size() - 1) == cudaSuccess;
  (void)cudaGetLastError();
  if (known && first.type == cudaMemoryTypeDevice && last.type == cudaMemoryTypeDevice) {
    // Device memory (a CUDA IPC handle opened by a server, another engine's output): the engine
    // reads it where it is, whatever the strategy; no device-to-device copy.
    if (first.device != device)
      throw invalid_argument("input '" + spec.name + "': caller memory is on GPU " + std::to_string(first.device) +
                             ", this slot runs on GPU " + std::to_string(device));
    void* in_place = const_cast<std::byte*>(memory.data());
    require_bindable(spec, in_place);
    context->bind(spec.name, in_place);
    caller_inputs[i] = caller_input{nullptr, in_place};
    return;
  }
  const auto path = properties(inputs[i].strategy()).path;
  if (path == data_path::migrate)
    throw unsupported("input '" + spec.name + "': strategy '" + std::string(to_string(inputs[i].strategy())) +
                      "' reads managed pages, which caller memory is not; use pinned, registered or mapped");
  if (!known || first.type != cudaMemoryTypeHost || last.type != cudaMemoryTypeHost)
    throw invalid_argument("input '" + spec.name + "': caller memory is neither device memory nor page-locked by "
                           "cudaHostRegister or cudaMallocHost, so the GPU cannot read it without a staging copy");
  slot::caller_input caller{memory.data(), nullptr};
  if (path == data_path::zero_copy) {
    void* view = nullptr;
    FERRY_CUDA_TRY(cudaHostGetDevicePointer(&view, const_cast<std::byte*>(memory.data()), 0));
    require_bindable(spec, view);
    context->bind(spec.name, view);
    caller.device_view = view;
  }
  caller_inputs[i] = caller;
}

bool slot::reads_caller_memory_in_place() const noexcept {
  for (const auto& c : caller_inputs)
    if (c && c->device_view != nullptr) return true;
  return false;
}

void slot::forget_caller_inputs() {
  for (std::size_t i = 0; i < caller_inputs.size(); ++i) {
    if (caller_inputs[i] && caller_inputs[i]->device_view != nullptr)
      context->bind(input_specs[i].name, inputs[i].device());
    caller_inputs[i].reset();
  }
}

void slot::enqueue_pipeline(bool with_timing) {
  core::scoped_device on_device(device);
  const auto began = std::chrono::steady_clock::now();
  timed = with_timing;
  if (graph) {
    if (timed) start.record(work);
    graph->launch(work);
    if (timed) end.record(work);
  } else {
    enqueue_stages(timed);
  }
  enqueue_us = std::chrono::duration<float, std::micro>(std::chrono::steady_clock::now() - began).count();
}

std::optional<std::string> slot::capture_graph() {
  core::scoped_device on_device(device);
  // Thread-local capture: other clients' threads keep issuing ordinary CUDA calls meanwhile.
  FERRY_CUDA_TRY(cudaStreamBeginCapture(work.get(), cudaStreamCaptureModeThreadLocal));
  std::optional<std::string> failure;
  try {
    enqueue_stages(false);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  cudaGraph_t g = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(work.get(), &g);
  (void)cudaGetLastError();
  if (!failure && ended != cudaSuccess)
    failure = std::string("cudaStreamEndCapture: ") + cudaGetErrorName(ended) + " (" +
              cudaGetErrorString(ended) + ")";
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
  for (auto& b : outputs) b.finish_to_host();
}

stage_times slot::times() const {
  stage_times t;
  t.enqueue_us = enqueue_us;
  if (!timed) return t;
  if (graph) {
    t.total_ms = elapsed_ms(start, end);
    return t;
  }
  if (copies) {
    t.h2d_ms = elapsed_ms(start, after_h2d);
    t.compute_ms = elapsed_ms(after_h2d, after_compute);
    t.d2h_ms = elapsed_ms(after_compute, end);
    t.total_ms = elapsed_ms(start, end);
    return t;
  }
  t.compute_ms = elapsed_ms(start, after_compute);
  t.total_ms = *t.compute_ms;
  if (prefetches) {
    // The prefetch ran before the first event, on the host's clock (see enqueue_stages).
    t.h2d_ms = prefetch_us / 1000.0F;
    t.total_ms += *t.h2d_ms;
  }
  return t;
}

}  // namespace ferry::detail
