#include "serve/execution/input_routing.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "ferry/core/error.hpp"

namespace ferry::serve {

caller_memory input_memory(const batch_item& item, std::size_t index) {
  const input_tensor& in = item.request->inputs.at(index);
  caller_memory m{.kind = caller_memory_kind::pageable_host,
                  .device = -1,
                  .address = reinterpret_cast<std::uintptr_t>(in.data.data()),
                  .bytes = in.data.size()};
  if (in.cuda_device) {
    m.kind = caller_memory_kind::device;
    m.device = *in.cuda_device;
  } else if (in.shared_memory) {
    m.kind = caller_memory_kind::registered_host;
  }
  return m;
}

input_route route_input(std::span<const batch_item> batch, std::size_t index, const tensor_spec& spec,
                        const slot_facts& slot) {
  const bool any_shared = std::any_of(batch.begin(), batch.end(), [&](const batch_item& item) {
    return item.request->inputs.at(index).shared_memory.has_value();
  });
  if (!any_shared) return input_route::gather_on_host;
  const caller_memory first = input_memory(batch.front(), index);
  if (batch.size() == 1 && !caller_input_refusal(spec, slot, first))
    return first.kind == caller_memory_kind::device ? input_route::caller_device : input_route::caller_host;
  return input_route::gather_on_device;
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
