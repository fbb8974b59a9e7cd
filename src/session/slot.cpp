#include "session/slot.hpp"

#include <nvtx3/nvtx3.hpp>

#include <chrono>
#include <cstdint>
#include <string>

#include "memory/allocations.hpp"

namespace ferry::detail {

graph_exec::~graph_exec() { FERRY_CUDA_TRY_NOTHROW(cudaGraphExecDestroy(exec_)); }
void graph_exec::launch(stream_ref s) const { FERRY_CUDA_TRY(cudaGraphLaunch(exec_, s.get())); }

slot::slot(int slot_index, engine& eng, const std::vector<tensor_spec>& io,
           const session_options& options, const device_caps& caps)
    : index(slot_index),
      device(caps.ordinal),
      single_stream(properties(options.strategy).path != data_path::copy &&
                    options.strategy != strategy_kind::managed_prefetch),
      inputs_copied(properties(options.strategy).path == data_path::copy) {
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
  // Only zero-copy paths read host memory during the engine's run; copy paths free it earlier.
  if (single_stream) engine_signals_consumed = context->signal_inputs_consumed(inputs_consumed.get());
}

void slot::enqueue_stages(bool with_timing) {
  if (single_stream) {
    // Nothing to copy: to_device/to_host are no-ops or stream-free hints, so only the engine is
    // bracketed. Two events instead of six keep the floor's overhead down.
    for (std::size_t i = 0; i < inputs.size(); ++i) input_to_device(i, compute);
    for (auto& b : outputs) b.to_device(compute);
    if (with_timing) compute_start.record(compute);
    {
      nvtx3::scoped_range r{"ferry.engine"};
      context->enqueue(compute);
    }
    if (!engine_signals_consumed) inputs_consumed.record(compute);
    if (with_timing) compute_end.record(compute);
    for (auto& b : outputs) b.to_host(compute);
    return;
  }
  // Inputs go to the device on the copy stream. Outputs get to_device too, which no strategy
  // uses today (copy strategies move an output only device -> host, and managed-prefetch keeps
  // outputs in host pages), so a strategy that needs it later finds it in stream order.
  if (with_timing) h2d_start.record(copy);
  {
    nvtx3::scoped_range r{"ferry.to_device"};
    for (std::size_t i = 0; i < inputs.size(); ++i) input_to_device(i, copy);
    for (auto& b : outputs) b.to_device(copy);
  }
  // Inputs read in place from caller memory are consumed only once the engine has run.
  const bool consumed_after_copy = inputs_copied && !reads_caller_memory_in_place();
  if (consumed_after_copy) inputs_consumed.record(copy);
  (with_timing ? h2d_end : fork).record(copy);
  (with_timing ? h2d_end : fork).make_wait(compute);
  if (with_timing) compute_start.record(compute);
  {
    nvtx3::scoped_range r{"ferry.engine"};
    context->enqueue(compute);
  }
  if (!consumed_after_copy) inputs_consumed.record(compute);  // the engine read host or caller memory
  (with_timing ? compute_end : join).record(compute);
  (with_timing ? compute_end : join).make_wait(copy);
  if (with_timing) d2h_start.record(copy);
  {
    nvtx3::scoped_range r{"ferry.to_host"};
    for (auto& b : outputs) b.to_host(copy);
  }
  if (with_timing) d2h_end.record(copy);
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

void slot::enqueue_pipeline() {
  memory::scoped_device on_device(device);
  const auto began = std::chrono::steady_clock::now();
  if (graph) {
    start_event().record(transfer_stream());
    graph->launch(transfer_stream());
    end_event().record(transfer_stream());
  } else {
    enqueue_stages(true);
  }
  enqueue_us = std::chrono::duration<float, std::micro>(std::chrono::steady_clock::now() - began).count();
}

std::optional<std::string> slot::capture_graph() {
  memory::scoped_device on_device(device);
  // Thread-local capture: other clients' threads keep issuing ordinary CUDA calls meanwhile.
  FERRY_CUDA_TRY(cudaStreamBeginCapture(transfer_stream().get(), cudaStreamCaptureModeThreadLocal));
  std::optional<std::string> failure;
  try {
    enqueue_stages(false);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  cudaGraph_t g = nullptr;
  const cudaError_t end = cudaStreamEndCapture(transfer_stream().get(), &g);
  (void)cudaGetLastError();
  if (!failure && end != cudaSuccess)
    failure = std::string("cudaStreamEndCapture: ") + cudaGetErrorName(end) + " (" +
              cudaGetErrorString(end) + ")";
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
  // d2h_end is the last work of the pipeline and the transfer stream waited for compute, so it
  // finishing means the request is complete (host functions of staged included).
  transfer_stream().synchronize_blocking();
}

stage_times slot::times() const {
  stage_times t;
  t.total_ms = elapsed_ms(start_event(), end_event());
  t.enqueue_us = enqueue_us;
  if (single_stream) {
    if (!graph) t.compute_ms = t.total_ms;
  } else if (!graph) {
    t.h2d_ms = elapsed_ms(h2d_start, h2d_end);
    t.compute_ms = elapsed_ms(compute_start, compute_end);
    t.d2h_ms = elapsed_ms(d2h_start, d2h_end);
  }
  return t;
}

}  // namespace ferry::detail
