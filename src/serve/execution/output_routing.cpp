#include "serve/execution/output_routing.hpp"

#include <cstdint>
#include <string>

#include "ferry/core/error.hpp"

namespace ferry::serve {

caller_memory destination_memory(const output_destination& destination) {
  caller_memory m{.kind = caller_memory_kind::registered_host,
                  .device = -1,
                  .address = reinterpret_cast<std::uintptr_t>(destination.bytes.data()),
                  .bytes = destination.bytes.size()};
  if (destination.cuda_device) {
    m.kind = caller_memory_kind::device;
    m.device = *destination.cuda_device;
  }
  return m;
}

output_plan plan_outputs(std::span<const batch_item> batch, const model_signature& signature,
                         std::span<const tensor_spec> outputs, const slot_facts& slot) {
  const std::vector<slot_facts> slots(outputs.size(), slot);
  return plan_outputs(batch, signature, outputs, slots);
}

output_plan plan_outputs(std::span<const batch_item> batch, const model_signature& signature,
                         std::span<const tensor_spec> outputs, std::span<const slot_facts> slots) {
  if (slots.size() != outputs.size())
    throw invalid_argument("plan_outputs: " + std::to_string(slots.size()) + " slot descriptions for " +
                           std::to_string(outputs.size()) + " outputs");
  output_plan plan;
  plan.host_view_needed.assign(outputs.size(), false);
  // How many steps read each engine output: one bound in place must be its only reader, since
  // the slot's own buffer (and its host view) then holds nothing of this request.
  std::vector<int> readers(outputs.size(), 0);
  for (const auto& item : batch)
    for (const std::size_t index : item.plan->outputs) ++readers.at(index);
  const bool batched = signature.max_batch > 0;
  std::int64_t row = 0;
  for (std::size_t n = 0; n < batch.size(); ++n) {
    const batch_item& item = batch[n];
    for (std::size_t k = 0; k < item.plan->outputs.size(); ++k) {
      output_step step{.item = n, .k = k, .output = item.plan->outputs[k]};
      const tensor_spec& spec = outputs[step.output];
      const std::size_t total = spec.bytes();
      step.bytes = total;
      if (batched) {
        const auto engine_rows = static_cast<std::size_t>(spec.shape.front());
        const std::size_t row_bytes = total / engine_rows;
        step.offset = static_cast<std::size_t>(row) * row_bytes;
        step.bytes = static_cast<std::size_t>(item.plan->rows) * row_bytes;
      }
      const bool to_shm = k < item.output_destinations.size() && !item.output_destinations[k].empty();
      if (!to_shm) {
        plan.host_view_needed[step.output] = true;
      } else {
        const output_destination& destination = item.output_destinations[k];
        if (destination.bytes.size() < step.bytes)
          throw invalid_argument("output '" + spec.name + "' needs " + std::to_string(step.bytes) +
                                 " bytes; its shared-memory range has " + std::to_string(destination.bytes.size()));
        caller_memory memory = destination_memory(destination);
        memory.bytes = step.bytes;  // the range used is the request's bytes; a larger range is fine
        const bool whole = step.offset == 0 && step.bytes == total && destination.bytes.size() == total;
        const bool bindable =
            whole && readers[step.output] == 1 && !caller_output_refusal(spec, slots[step.output], memory);
        step.route = bindable ? output_route::bind_in_place : output_route::deliver;
      }
      plan.steps.push_back(step);
    }
    row += item.plan->rows;
  }
  return plan;
}

}  // namespace ferry::serve
