#include "ferry/session/caller_memory.hpp"

#include "ferry/memory/buffer.hpp"

namespace ferry {
namespace {

in_place_refusal wrong(std::string reason) { return {false, std::move(reason)}; }
in_place_refusal cannot(std::string reason) { return {true, std::move(reason)}; }

// Checks shared by both roles: the size, a fixed graph, another GPU, the binding alignment.
std::optional<in_place_refusal> common_refusal(const tensor_spec& spec, const char* role, const slot_facts& slot,
                                               const caller_memory& memory, bool bound_in_place) {
  const std::string what = std::string(role) + " '" + spec.name + "': ";
  if (memory.bytes != spec.bytes())
    return wrong(what + "caller memory is " + std::to_string(memory.bytes) + " bytes, the tensor is " +
                 std::to_string(spec.bytes()));
  if (slot.graph_active) return cannot(what + "this slot runs as a captured CUDA graph, whose addresses are fixed");
  if (memory.kind == caller_memory_kind::device && memory.device != slot.device)
    return wrong(what + "caller memory is on GPU " + std::to_string(memory.device) + ", this slot runs on GPU " +
                 std::to_string(slot.device));
  // Engines bind with TensorRT's 256-byte alignment; checked before anything is bound, so the
  // slot is left as it was and the message says what to change.
  if (bound_in_place && memory.address % device_alignment != 0)
    return wrong(what + "caller memory would be used in place, but its address is not " +
                 std::to_string(device_alignment) + "-byte aligned; start the tensor at an aligned offset");
  return std::nullopt;
}

}  // namespace

std::optional<in_place_refusal> caller_input_refusal(const tensor_spec& spec, const slot_facts& slot,
                                                     const caller_memory& memory) {
  const data_path path = properties(slot.strategy).path;
  if (memory.kind == caller_memory_kind::device) return common_refusal(spec, "input", slot, memory, true);
  if (path == data_path::migrate)
    return cannot("input '" + spec.name + "': strategy '" + std::string(to_string(slot.strategy)) +
                  "' reads managed pages, which caller memory is not; use pinned, registered or mapped");
  if (memory.kind == caller_memory_kind::pageable_host)
    return wrong("input '" + spec.name +
                 "': caller memory is neither device memory nor page-locked by "
                 "cudaHostRegister or cudaMallocHost, so the GPU cannot read it without a staging copy");
  return common_refusal(spec, "input", slot, memory, path == data_path::zero_copy);
}

std::optional<in_place_refusal> caller_output_refusal(const tensor_spec& spec, const slot_facts& slot,
                                                      const caller_memory& memory) {
  if (memory.kind == caller_memory_kind::device) return common_refusal(spec, "output", slot, memory, true);
  if (memory.kind == caller_memory_kind::pageable_host)
    return wrong("output '" + spec.name + "': caller memory is neither device memory nor page-locked host memory");
  if (properties(slot.strategy).path != data_path::zero_copy)
    return cannot("output '" + spec.name + "': strategy '" + std::string(to_string(slot.strategy)) +
                  "' writes its outputs to device or managed memory; host memory is delivered to by a copy");
  return common_refusal(spec, "output", slot, memory, true);
}

}  // namespace ferry
