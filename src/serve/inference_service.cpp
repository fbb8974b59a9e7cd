#include "serve/inference_service.hpp"

#include <algorithm>

#include "serve/request_error.hpp"
#include "serve/cuda_shm_registry.hpp"
#include "serve/shm_registry.hpp"

namespace ferry::serve {

inference_service::inference_service(const model_repository& repository, shm_registry* system_shm,
                                     cuda_shm_registry* cuda_shm)
    : repository_(repository), system_shm_(system_shm), cuda_shm_(cuda_shm) {}

namespace {

// A tensor in a CUDA shared-memory region would need the session to bind device memory per
// request; rather than copy it through the host, such a request is refused by name.
void refuse_cuda_regions(const infer_request& request, const cuda_shm_registry* cuda) {
  if (cuda == nullptr) return;
  const auto refuse = [&](const std::string& tensor, const shm_ref& ref) {
    if (cuda->contains(ref.region))
      throw request_error(error_status::not_implemented,
                          tensor + " is in CUDA shared-memory region '" + ref.region +
                              "'; ferry serve registers CUDA regions but cannot serve tensors from them yet");
  };
  for (const auto& in : request.inputs)
    if (in.shared_memory) refuse("input '" + in.name + "'", *in.shared_memory);
  for (const auto& out : request.outputs)
    if (out.shared_memory) refuse("output '" + out.name + "'", *out.shared_memory);
}

}  // namespace

std::vector<std::string> inference_service::extensions() const {
  std::vector<std::string> list{"binary_tensor_data", "statistics", "model_repository"};
  if (system_shm_ != nullptr) list.emplace_back("system_shared_memory");
  return list;
}

const served_model& inference_service::find(std::string_view name, std::string_view version) const {
  const served_model* model = repository_.find(name);
  if (model == nullptr) throw request_error(error_status::not_found, "unknown model '" + std::string(name) + "'");
  if (!version.empty() && version != model_version)
    throw request_error(error_status::not_found, "model '" + std::string(name) + "' has no version '" +
                                                     std::string(version) + "' (its only version is " +
                                                     std::string(model_version) + ")");
  return *model;
}

const served_model& inference_service::find_ready(std::string_view name, std::string_view version) const {
  const served_model& model = find(name, version);
  if (!model.ready())
    throw request_error(error_status::unavailable,
                        "model '" + std::string(name) + "' is not ready: " + model.failure);
  return model;
}

std::future<infer_response> inference_service::infer(infer_request request) {
  const served_model& model = find_ready(request.model, request.version);
  submission work;
  // Shared-memory inputs and outputs: look the regions up and check every range first.
  const bool uses_shm = std::any_of(request.inputs.begin(), request.inputs.end(),
                                    [](const input_tensor& t) { return t.shared_memory.has_value(); }) ||
                        std::any_of(request.outputs.begin(), request.outputs.end(),
                                    [](const requested_output& o) { return o.shared_memory.has_value(); });
  if (uses_shm) {
    if (system_shm_ == nullptr)
      throw request_error(error_status::forbidden,
                          "the request uses shared memory, which this server does not allow (start it with "
                          "--allow-client-shm)");
    refuse_cuda_regions(request, cuda_shm_);
    system_shm_->resolve(request, work.output_destinations, work.pinned_regions);
  }
  work.plan = plan_request(model.signature, request);
  if (uses_shm) check_output_ranges(model.signature, work.plan, request, work.output_destinations);
  work.request = std::move(request);
  return model.scheduler->submit(std::move(work));
}

}  // namespace ferry::serve
