#include "serve/shm/shm_resolution.hpp"

#include <algorithm>

#include "serve/shm/cuda_shm_registry.hpp"
#include "serve/shm/shm_registry.hpp"
#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve {
namespace {

// Where a shared-memory tensor's range is: a host range, or a device range on a GPU.
output_destination lookup(const shm_ref& ref, const std::string& tensor, const shm_registry& system,
                          const cuda_shm_registry* cuda, std::vector<std::shared_ptr<const void>>& pins,
                          const std::optional<shm_client>& client) {
  const bool in_cuda = cuda != nullptr && cuda->contains(ref.region, client);
  if (in_cuda && system.contains(ref.region, client))
    throw bad_request(tensor + ": region '" + ref.region +
                      "' is registered both as system and as CUDA shared memory; unregister one of them");
  if (!in_cuda) return {system.lookup(ref, tensor, pins, client), std::nullopt};
  const cuda_shm_range range = cuda->lookup(ref, tensor, pins, client);
  return {range.bytes, range.device};
}

}  // namespace

bool uses_shared_memory(const infer_request& request) {
  return std::any_of(request.inputs.begin(), request.inputs.end(),
                     [](const input_tensor& t) { return t.shared_memory.has_value(); }) ||
         std::any_of(request.outputs.begin(), request.outputs.end(),
                     [](const requested_output& o) { return o.shared_memory.has_value(); });
}

void resolve_shared_memory(infer_request& request, const shm_registry& system, const cuda_shm_registry* cuda,
                           std::vector<output_destination>& outputs, std::vector<std::shared_ptr<const void>>& pins) {
  for (auto& in : request.inputs) {
    if (!in.shared_memory) continue;
    const output_destination where =
        lookup(*in.shared_memory, "input '" + in.name + "'", system, cuda, pins, request.client);
    in.data = where.bytes;
    in.cuda_device = where.cuda_device;
  }
  outputs.clear();
  for (const auto& out : request.outputs)
    outputs.push_back(out.shared_memory
                          ? lookup(*out.shared_memory, "output '" + out.name + "'", system, cuda, pins, request.client)
                          : output_destination{});
}

void check_output_ranges(const model_signature& signature, const request_plan& plan, const infer_request& request,
                         const std::vector<output_destination>& outputs) {
  for (std::size_t k = 0; k < outputs.size() && k < plan.outputs.size(); ++k) {
    if (!request.outputs[k].shared_memory) continue;
    const tensor_spec& spec = signature.outputs[plan.outputs[k]];
    std::vector<std::int64_t> shape = spec.shape;
    if (signature.max_batch > 0) shape.front() = plan.rows;
    const std::size_t needed = element_count(shape) * size_of(spec.type);
    if (outputs[k].bytes.size() < needed)
      throw bad_request("output '" + spec.name + "' of shape " + shape_text(shape) + " needs " +
                        std::to_string(needed) + " bytes; its shared-memory range has " +
                        std::to_string(outputs[k].bytes.size()));
  }
}

}  // namespace ferry::serve
