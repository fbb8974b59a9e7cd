// A slot's caller-memory operations for one request: the rule of ferry/session/caller_memory.hpp applied
// to what CUDA says the memory is, and what the slot records per tensor (slot_tensors.hpp).
#include <algorithm>
#include <cstdint>
#include <string>

#include "session/slot.hpp"

namespace ferry::detail {
namespace {

[[noreturn]] void throw_refusal(const in_place_refusal& r) {
  if (r.unsupported) throw unsupported(r.reason);
  throw invalid_argument(r.reason);
}

std::string graph_fixed(const char* role, const tensor_spec& spec) {
  return std::string(role) + " '" + spec.name + "': this slot runs as a captured CUDA graph, whose addresses are fixed";
}

std::string other_gpu(const char* role, const tensor_spec& spec, const char* what, int theirs, int ours) {
  return std::string(role) + " '" + spec.name + "': " + what + " is on GPU " + std::to_string(theirs) +
         ", this slot runs on GPU " + std::to_string(ours);
}

}  // namespace

slot_facts slot::facts(strategy_kind strategy) const noexcept {
  return {.strategy = strategy, .device = ordinal(), .graph_active = graph().has_value()};
}

caller_memory slot::describe(const void* data, std::size_t bytes, strategy_kind strategy, bool as_output) const {
  caller_memory m{.kind = caller_memory_kind::pageable_host,
                  .device = -1,
                  .address = reinterpret_cast<std::uintptr_t>(data),
                  .bytes = bytes};
  if (bytes == 0 || data == nullptr) return m;
  const auto on_device = work.activate();  // a registration's device view is the slot's GPU's
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

std::optional<in_place_refusal> slot::input_in_place_refusal(std::size_t i, std::span<const std::byte> memory) const {
  const slot_input& t = inputs[i];
  const strategy_kind strategy = t.buffer.strategy();
  return caller_input_refusal(t.spec, facts(strategy), describe(memory.data(), memory.size(), strategy, false));
}

std::optional<in_place_refusal> slot::output_in_place_refusal(std::size_t i, std::span<const std::byte> memory) const {
  const slot_output& t = outputs[i];
  const strategy_kind strategy = t.buffer.strategy();
  return caller_output_refusal(t.spec, facts(strategy), describe(memory.data(), memory.size(), strategy, true));
}

void slot::use_caller_input(std::size_t i, std::span<const std::byte> memory) {
  slot_input& t = inputs[i];
  const caller_memory m = describe(memory.data(), memory.size(), t.buffer.strategy(), false);
  if (auto refusal = caller_input_refusal(t.spec, facts(t.buffer.strategy()), m)) throw_refusal(*refusal);
  const bool in_place =
      m.kind == caller_memory_kind::device || properties(t.buffer.strategy()).path == data_path::zero_copy;
  if (in_place && t.guard) {
    // A checked input is never read where the caller keeps it: the check repairs values in place,
    // which must not write the caller's memory, and the caller could change a value after the
    // check. One copy into the slot's device memory (a few KB for token ids) closes both.
    const gather_piece whole{.source = memory, .offset = 0};
    gather_input(i, std::span(&whole, 1));
    return;
  }
  t.reset(context());
  if (in_place) {
    // Device memory (a CUDA IPC handle, another engine's output) is read where it is, whatever the
    // strategy, with no device-to-device copy; registered host memory under zero-copy strategies
    // by its device view (m.address).
    t.bound_address = reinterpret_cast<void*>(m.address);
    context().bind(t.spec.name, t.bound_address);
  } else {
    t.dma_source = memory.data();  // one DMA into the slot's device buffer
  }
}

void slot::gather_input(std::size_t i, std::span<const gather_piece> pieces) {
  slot_input& t = inputs[i];
  if (graph()) throw unsupported(graph_fixed("input", t.spec));
  const std::size_t bytes = t.spec.bytes();
  gather g{.pieces = {pieces.begin(), pieces.end()}};
  std::sort(g.pieces.begin(), g.pieces.end(),
            [](const gather_piece& a, const gather_piece& b) { return a.offset < b.offset; });
  std::size_t covered = 0;
  for (const auto& p : g.pieces) {
    if (p.offset < covered || p.offset > bytes || p.source.size() > bytes - p.offset)
      throw invalid_argument("input '" + t.spec.name + "': gathered ranges overlap or leave the " +
                             std::to_string(bytes) + "-byte tensor (a range of " + std::to_string(p.source.size()) +
                             " bytes at offset " + std::to_string(p.offset) + ")");
    covered = p.offset + p.source.size();
    if (p.source.empty()) continue;
    // Pageable host memory is taken too (a merged batch may hold bytes from a request body): the
    // driver stages it before its copy returns, so it is correct, only not one DMA.
    const caller_memory m = describe(p.source.data(), p.source.size(), t.buffer.strategy(), false);
    if (m.kind == caller_memory_kind::device && m.device != ordinal())
      throw invalid_argument(other_gpu("input", t.spec, "a gathered range", m.device, ordinal()));
  }
  t.reset(context());
  const data_path path = properties(t.buffer.strategy()).path;
  if (path == data_path::copy || path == data_path::resident) {
    g.target = static_cast<std::byte*>(t.buffer.device_address());
  } else {
    // The buffer is host or managed memory: a tensor assembled by copies is read at device speed
    // from device memory of the slot, bound for this request (reset() binds the buffer again).
    if (!t.gather_scratch) t.gather_scratch.emplace(core::allocate_device(t.buffer.bytes(), ordinal()));
    g.target = static_cast<std::byte*>(t.gather_scratch->get());
    t.bound_address = g.target;
    context().bind(t.spec.name, t.bound_address);
  }
  t.gathered = std::move(g);
}

void slot::bind_caller_output(std::size_t i, std::span<std::byte> memory) {
  slot_output& t = outputs[i];
  const caller_memory m = describe(memory.data(), memory.size(), t.buffer.strategy(), true);
  if (auto refusal = caller_output_refusal(t.spec, facts(t.buffer.strategy()), m)) throw_refusal(*refusal);
  t.bound_address = reinterpret_cast<void*>(m.address);
  context().bind(t.spec.name, t.bound_address);
  t.deliveries.clear();
}

void slot::deliver_output(std::size_t i, const output_delivery& d, bool host_view_wanted) {
  slot_output& t = outputs[i];
  if (t.bound_address != nullptr)
    throw invalid_argument("output '" + t.spec.name +
                           "' is bound to caller memory for this request; there is nothing to deliver");
  if (graph()) throw unsupported(graph_fixed("output", t.spec));
  const std::size_t bytes = t.spec.bytes();
  if (d.offset > bytes || d.destination.size() > bytes - d.offset)
    throw invalid_argument("output '" + t.spec.name + "': the range of " + std::to_string(d.destination.size()) +
                           " bytes at offset " + std::to_string(d.offset) + " leaves the " + std::to_string(bytes) +
                           "-byte tensor");
  if (!d.destination.empty()) {
    const caller_memory m = describe(d.destination.data(), d.destination.size(), t.buffer.strategy(), true);
    if (m.kind == caller_memory_kind::pageable_host)
      throw invalid_argument("output '" + t.spec.name +
                             "': the destination is neither device memory nor "
                             "page-locked host memory, so the GPU cannot copy into it");
    if (m.kind == caller_memory_kind::device && m.device != ordinal())
      throw invalid_argument(other_gpu("output", t.spec, "the destination", m.device, ordinal()));
  }
  // The host view is left out only when no delivery of the output asked for it.
  t.host_view_wanted = t.deliveries.empty() ? host_view_wanted : t.host_view_wanted || host_view_wanted;
  if (!d.destination.empty()) t.deliveries.push_back(d);
}

}  // namespace ferry::detail
