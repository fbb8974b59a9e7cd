#include "serve/input_routing.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "ferry/buffer.hpp"
#include "ferry/error.hpp"

namespace ferry::serve {
namespace {

bool aligned_for_binding(const std::byte* p) noexcept {
  return reinterpret_cast<std::uintptr_t>(p) % device_alignment == 0;
}

}  // namespace

input_route route_input(std::span<const batch_item> batch, std::size_t index, std::size_t tensor_bytes,
                        strategy_kind strategy) {
  const bool any_on_device = std::any_of(batch.begin(), batch.end(), [&](const batch_item& item) {
    return item.request->inputs.at(index).cuda_device.has_value();
  });
  const bool lone = batch.size() == 1;
  const input_tensor& first = batch.front().request->inputs.at(index);
  const bool exact = lone && first.shared_memory.has_value() && first.data.size() == tensor_bytes;
  if (any_on_device)
    // Engines (TensorRT first) need 256-byte aligned bindings; a client's offset may not be.
    return exact && aligned_for_binding(first.data.data()) ? input_route::caller_device
                                                           : input_route::gather_on_device;
  const data_path path = properties(strategy).path;
  // Zero-copy strategies bind the engine to the host range itself, so it must be aligned too.
  if (exact && path != data_path::migrate && (path != data_path::zero_copy || aligned_for_binding(first.data.data())))
    return input_route::caller_host;
  return input_route::gather_on_host;
}

void check_cuda_inputs_on(std::span<const batch_item> batch, int device) {
  for (const auto& item : batch)
    for (const auto& in : item.request->inputs)
      if (in.cuda_device && *in.cuda_device != device)
        throw invalid_argument("input '" + in.name + "' is in CUDA shared-memory region '" +
                               (in.shared_memory ? in.shared_memory->region : std::string{}) + "' on GPU " +
                               std::to_string(*in.cuda_device) + ", but this model instance runs on GPU " +
                               std::to_string(device) + "; register the region on the GPU the model runs on");
}

}  // namespace ferry::serve
