#include "session/slot.hpp"

#include <nvtx3/nvtx3.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include "core/scoped_device.hpp"

namespace ferry::detail {

graph_exec::~graph_exec() { FERRY_CUDA_TRY_NOTHROW(cudaGraphExecDestroy(exec_)); }
void graph_exec::launch(stream_ref s) const { FERRY_CUDA_TRY(cudaGraphLaunch(exec_, s.get())); }

slot::slot(int slot_index, engine& eng, const std::vector<tensor_spec>& io,
           const session_options& options, const device_caps& caps)
    : index(slot_index), device(caps.ordinal) {
  for (const auto& spec : io) {
    if (spec.is_dynamic())
      throw invalid_argument("tensor '" + spec.name +
                             "' has a dynamic dimension; resolve shapes before making a session");
    const bool is_input = spec.role == tensor_role::input;
    const buffer_request request{.bytes = spec.bytes(),
                                 .dir = is_input ? direction::input : direction::output,
                                 .managed_policy = options.managed_policy};
    auto buffer = io_buffer::allocate(strategy_for(options, spec.name), request, caps);
    (is_input ? input_specs : output_specs).push_back(spec);
    (is_input ? inputs : outputs).push_back(std::move(buffer));
  }
  const auto copy_path = [](const io_buffer& b) { return properties(b.strategy()).path == data_path::copy; };
  const auto prefetched = [](const io_buffer& b) { return b.strategy() == strategy_kind::managed_prefetch; };
  const auto any = [&](auto&& test) {
    return std::any_of(inputs.begin(), inputs.end(), test) || std::any_of(outputs.begin(), outputs.end(), test);
  };
  copies = any(copy_path);
  inputs_copied = std::all_of(inputs.begin(), inputs.end(), copy_path);
  prefetches = any(prefetched);
  caller_inputs.resize(inputs.size());
  gathers.resize(inputs.size());
  gather_scratch.resize(inputs.size());
  caller_outputs.assign(outputs.size(), nullptr);
  deliveries.resize(outputs.size());
  host_view_wanted.assign(outputs.size(), true);
  host_view_valid.assign(outputs.size(), false);
  context = eng.make_context(io);
  for (std::size_t i = 0; i < inputs.size(); ++i) context->bind(input_specs[i].name, inputs[i].device());
  for (std::size_t i = 0; i < outputs.size(); ++i)
    context->bind(output_specs[i].name, outputs[i].device());
  // Only paths the engine reads host memory on can free it before the engine is done; when every
  // input copies, they are free after their copies anyway.
  if (!inputs_copied) engine_signals_consumed = context->signal_inputs_consumed(inputs_consumed.get());
}

void slot::enqueue_stages(bool with_timing) {
  const stream_ref s = work;
  // A managed prefetch goes first, on the idle stream: the driver then migrates the pages at
  // once. Behind an event recorded on the same stream it took a slower path (19 MB: 584 us
  // against the hand-written recipe's whole request of 455 us, on the H200 host). Its host time
  // is (part of) the h2d stage. Only the prefetches go first: the other buffers' copies, and
  // gathers and caller memory standing in for a prefetch, are timed by the events.
  const auto prefetching_output = [](const io_buffer& b) { return b.strategy() == strategy_kind::managed_prefetch; };
  if (prefetches) {
    const auto began = std::chrono::steady_clock::now();
    nvtx3::scoped_range r{"ferry.to_device"};
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (input_prefetches(i)) input_to_device(i, s);
    for (auto& b : outputs)
      if (prefetching_output(b)) b.to_device(s);
    prefetch_us = std::chrono::duration<float, std::micro>(std::chrono::steady_clock::now() - began).count();
  }
  stage_events_ = copies || moves_caller_bytes();
  if (with_timing) start.record(s);
  // Inputs read in place from caller memory are consumed only once the engine has run; so are
  // gathered ones under strategies that copy nothing else (their marker stays after compute),
  // and all of them when some input's strategy has the engine read its host or managed memory.
  const bool consumed_after_copy = inputs_copied && !reads_caller_memory_in_place();
  {
    nvtx3::scoped_range r{"ferry.to_device"};
    // Outputs get to_device too, which no strategy uses today (copy strategies move an output
    // only device -> host, managed-prefetch keeps outputs in host pages), so a strategy that
    // needs it later finds it in stream order.
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (!input_prefetches(i)) input_to_device(i, s);
    for (auto& b : outputs)
      if (!prefetching_output(b)) b.to_device(s);
  }
  if (stage_events_ && with_timing) after_h2d.record(s);
  if (consumed_after_copy) {
    if (with_timing && stage_events_) {
      consumed_marker = &after_h2d;
    } else {
      record_consumed(s);
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
      record_consumed(s);
      consumed_marker = &inputs_consumed;
    }
  }
  {
    nvtx3::scoped_range r{"ferry.to_host"};
    for (std::size_t i = 0; i < outputs.size(); ++i) output_to_caller(i, s);
  }
  if (stage_events_ && with_timing) end.record(s);
}

void slot::record_consumed(stream_ref s) {
  // Captured into the graph as its own node, so each launch marks the point again; otherwise
  // wait_inputs_consumed() on a graph slot would wait for an event that was never recorded.
  if (capturing_)
    inputs_consumed.record_in_capture(s);
  else
    inputs_consumed.record(s);
}

bool slot::input_prefetches(std::size_t i) const noexcept {
  return inputs[i].strategy() == strategy_kind::managed_prefetch && !gathers[i] && !caller_inputs[i];
}

void slot::input_to_device(std::size_t i, stream_ref s) {
  if (const auto& g = gathers[i]) {
    // Pieces were checked sorted and disjoint: zero-fill each gap, then copy each piece.
    std::size_t covered = 0;
    for (const auto& p : g->pieces) {
      if (p.offset > covered) FERRY_CUDA_TRY(cudaMemsetAsync(g->target + covered, 0, p.offset - covered, s.get()));
      FERRY_CUDA_TRY(cudaMemcpyAsync(g->target + p.offset, p.source.data(), p.source.size(), cudaMemcpyDefault, s.get()));
      covered = p.offset + p.source.size();
    }
    if (covered < inputs[i].bytes())
      FERRY_CUDA_TRY(cudaMemsetAsync(g->target + covered, 0, inputs[i].bytes() - covered, s.get()));
    return;
  }
  const auto& caller = caller_inputs[i];
  if (!caller) {
    inputs[i].to_device(s);
    return;
  }
  if (caller->device_view != nullptr) return;  // zero-copy: the engine reads the caller's memory
  FERRY_CUDA_TRY(cudaMemcpyAsync(inputs[i].device(), caller->host, inputs[i].bytes(), cudaMemcpyHostToDevice, s.get()));
}

void slot::output_to_caller(std::size_t i, stream_ref s) {
  if (caller_outputs[i] != nullptr) {
    host_view_valid[i] = false;  // the engine wrote the caller's memory, not the slot's
    return;
  }
  // cudaMemcpyDefault: the pointers say the direction (device -> registered host is one DMA,
  // device -> device one copy on the GPU; a zero-copy or managed output is read where it lives).
  auto* source = static_cast<const std::byte*>(outputs[i].device());
  for (const auto& d : deliveries[i])
    FERRY_CUDA_TRY(cudaMemcpyAsync(d.destination.data(), source + d.offset, d.destination.size(), cudaMemcpyDefault,
                                   s.get()));
  const bool fetch = deliveries[i].empty() || host_view_wanted[i];
  if (fetch) outputs[i].to_host(s);
  host_view_valid[i] = fetch;
}

namespace {

[[noreturn]] void throw_refusal(const in_place_refusal& r) {
  if (r.unsupported) throw unsupported(r.reason);
  throw invalid_argument(r.reason);
}

}  // namespace

slot_facts slot::facts_of_input(std::size_t i) const noexcept {
  return {.strategy = inputs[i].strategy(), .device = device, .graph_active = graph.has_value()};
}

slot_facts slot::facts_of_output(std::size_t i) const noexcept {
  return {.strategy = outputs[i].strategy(), .device = device, .graph_active = graph.has_value()};
}

caller_memory slot::describe(const void* data, std::size_t bytes, strategy_kind strategy, bool as_output) const {
  caller_memory m{.kind = caller_memory_kind::pageable_host,
                  .device = -1,
                  .address = reinterpret_cast<std::uintptr_t>(data),
                  .bytes = bytes};
  if (bytes == 0 || data == nullptr) return m;
  // Both ends of the range: registrations and allocations are whole ranges, so the same kind of
  // memory at each end means the caller's range is (at least) that memory.
  cudaPointerAttributes first{}, last{};
  const bool known = cudaPointerGetAttributes(&first, data) == cudaSuccess &&
                     cudaPointerGetAttributes(&last, static_cast<const std::byte*>(data) + bytes - 1) == cudaSuccess;
  (void)cudaGetLastError();
  if (!known) return m;
  if (first.type == cudaMemoryTypeDevice && last.type == cudaMemoryTypeDevice) {
    m.kind = caller_memory_kind::device;
    m.device = first.device;
  } else if (first.type == cudaMemoryTypeHost && last.type == cudaMemoryTypeHost) {
    m.kind = caller_memory_kind::registered_host;
    // Bound in place under zero-copy strategies: the alignment that counts is the device view's.
    if (properties(strategy).path == data_path::zero_copy || as_output)
      m.address = reinterpret_cast<std::uintptr_t>(first.devicePointer);
  }
  return m;
}

void slot::use_caller_input(std::size_t i, std::span<const std::byte> memory) {
  const tensor_spec& spec = input_specs[i];
  const caller_memory m = describe(memory.data(), memory.size(), inputs[i].strategy(), false);
  if (auto refusal = caller_input_refusal(spec, facts_of_input(i), m)) throw_refusal(*refusal);
  gathers[i].reset();
  if (m.kind == caller_memory_kind::device) {
    // Device memory (a CUDA IPC handle opened by a server, another engine's output): the engine
    // reads it where it is, whatever the strategy; no device-to-device copy.
    void* in_place = const_cast<std::byte*>(memory.data());
    context->bind(spec.name, in_place);
    caller_inputs[i] = caller_input{nullptr, in_place};
    return;
  }
  slot::caller_input caller{memory.data(), nullptr};
  if (properties(inputs[i].strategy()).path == data_path::zero_copy) {
    void* view = nullptr;
    FERRY_CUDA_TRY(cudaHostGetDevicePointer(&view, const_cast<std::byte*>(memory.data()), 0));
    context->bind(spec.name, view);
    caller.device_view = view;
  }
  caller_inputs[i] = caller;
}

void slot::gather_input(std::size_t i, std::span<const gather_piece> pieces) {
  const tensor_spec& spec = input_specs[i];
  if (graph) throw unsupported("input '" + spec.name + "': this slot runs as a captured CUDA graph, whose addresses are fixed");
  gather g;
  g.pieces.assign(pieces.begin(), pieces.end());
  std::sort(g.pieces.begin(), g.pieces.end(),
            [](const gather_piece& a, const gather_piece& b) { return a.offset < b.offset; });
  std::size_t covered = 0;
  for (const auto& p : g.pieces) {
    if (p.offset < covered || p.offset > inputs[i].bytes() || p.source.size() > inputs[i].bytes() - p.offset)
      throw invalid_argument("input '" + spec.name + "': gathered ranges overlap or leave the " +
                             std::to_string(inputs[i].bytes()) + "-byte tensor (a range of " +
                             std::to_string(p.source.size()) + " bytes at offset " + std::to_string(p.offset) + ")");
    covered = p.offset + p.source.size();
    if (p.source.empty()) continue;
    // Pageable host memory is taken too (a merged batch may hold bytes from a request body): the
    // driver stages it before its copy returns, so it is correct, only not one DMA.
    const caller_memory m = describe(p.source.data(), p.source.size(), inputs[i].strategy(), false);
    if (m.kind == caller_memory_kind::device && m.device != device)
      throw invalid_argument("input '" + spec.name + "': a gathered range is on GPU " + std::to_string(m.device) +
                             ", this slot runs on GPU " + std::to_string(device));
  }
  const data_path path = properties(inputs[i].strategy()).path;
  if (path == data_path::copy || path == data_path::resident) {
    g.target = static_cast<std::byte*>(inputs[i].device());
    if (caller_inputs[i] && caller_inputs[i]->device_view != nullptr) context->bind(spec.name, inputs[i].device());
    caller_inputs[i].reset();
  } else {
    auto& scratch = gather_scratch[i];
    if (!scratch) scratch.emplace(core::allocate_device(inputs[i].bytes()));
    g.target = static_cast<std::byte*>(scratch->get());
    context->bind(spec.name, g.target);
    // Bound like caller device memory, so the next request binds the slot's own buffer again.
    caller_inputs[i] = caller_input{nullptr, g.target};
  }
  gathers[i] = std::move(g);
}

void slot::bind_caller_output(std::size_t i, std::span<std::byte> memory) {
  const tensor_spec& spec = output_specs[i];
  const caller_memory m = describe(memory.data(), memory.size(), outputs[i].strategy(), true);
  if (auto refusal = caller_output_refusal(spec, facts_of_output(i), m)) throw_refusal(*refusal);
  void* address = reinterpret_cast<void*>(m.address);
  context->bind(spec.name, address);
  caller_outputs[i] = address;
  deliveries[i].clear();
}

void slot::deliver_output(std::size_t i, const output_delivery& d) {
  const tensor_spec& spec = output_specs[i];
  if (graph) throw unsupported("output '" + spec.name + "': this slot runs as a captured CUDA graph, whose addresses are fixed");
  if (d.offset > outputs[i].bytes() || d.destination.size() > outputs[i].bytes() - d.offset)
    throw invalid_argument("output '" + spec.name + "': the range of " + std::to_string(d.destination.size()) +
                           " bytes at offset " + std::to_string(d.offset) + " leaves the " +
                           std::to_string(outputs[i].bytes()) + "-byte tensor");
  if (d.destination.empty()) return;
  const caller_memory m = describe(d.destination.data(), d.destination.size(), outputs[i].strategy(), true);
  if (m.kind == caller_memory_kind::pageable_host)
    throw invalid_argument("output '" + spec.name + "': the destination is neither device memory nor page-locked "
                           "host memory, so the GPU cannot copy into it");
  if (m.kind == caller_memory_kind::device && m.device != device)
    throw invalid_argument("output '" + spec.name + "': the destination is on GPU " + std::to_string(m.device) +
                           ", this slot runs on GPU " + std::to_string(device));
  deliveries[i].push_back(d);
}

bool slot::moves_caller_bytes() const noexcept {
  for (const auto& g : gathers)
    if (g) return true;
  for (const auto& d : deliveries)
    if (!d.empty()) return true;
  return false;
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
    gathers[i].reset();
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (caller_outputs[i] != nullptr) context->bind(output_specs[i].name, outputs[i].device());
    caller_outputs[i] = nullptr;
    deliveries[i].clear();
    host_view_wanted[i] = true;
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
  capturing_ = true;
  try {
    enqueue_stages(false);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  capturing_ = false;
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
  if (stage_events_) {
    t.h2d_ms = elapsed_ms(start, after_h2d);
    t.compute_ms = elapsed_ms(after_h2d, after_compute);
    t.d2h_ms = elapsed_ms(after_compute, end);
    t.total_ms = elapsed_ms(start, end);
  } else {
    t.compute_ms = elapsed_ms(start, after_compute);
    t.total_ms = *t.compute_ms;
  }
  if (prefetches) {
    // The prefetches ran before the first event, on the host's clock (see enqueue_stages); beside
    // other tensors' copies they are part of the same h2d stage.
    const float prefetch_ms = prefetch_us / 1000.0F;
    t.h2d_ms = t.h2d_ms.value_or(0.0F) + prefetch_ms;
    t.total_ms += prefetch_ms;
  }
  return t;
}

}  // namespace ferry::detail
