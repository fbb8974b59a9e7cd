#include "serve/service/inference_service.hpp"

#include "ferry/core/device_fault.hpp"
#include "serve/codec/client_json.hpp"
#include "serve/service/index_values.hpp"
#include "serve/shm/cuda_shm_registry.hpp"
#include "serve/shm/shm_registry.hpp"
#include "serve/shm/shm_resolution.hpp"
#include "serve/vocabulary/device_fault_report.hpp"
#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve {

inference_service::inference_service(model_repository& repository, shm_registry* system_shm,
                                     cuda_shm_registry* cuda_shm, std::chrono::microseconds request_timeout,
                                     std::size_t inflight_bytes, readiness readiness_rule)
    : repository_(repository),
      readiness_(readiness_rule),
      system_shm_(system_shm),
      cuda_shm_(cuda_shm),
      request_timeout_(request_timeout),
      intake_(inflight_bytes) {}

bool inference_service::live() const noexcept { return !device_faulted(); }

std::string inference_service::not_ready_reason() const {
  if (const auto fault = first_device_fault()) return device_fault_reason(*fault);
  if (intake_.draining()) return "the server is shutting down";
  if (readiness_ == readiness::per_model) return {};
  // Only the models meant to be loaded count: one never loaded or unloaded by the API does not.
  const auto wanted = repository_.wanted();
  if (wanted.not_ready.empty()) return {};
  std::string names;
  for (const auto& name : wanted.not_ready) names += (names.empty() ? "" : ", ") + name;
  return "strict readiness: " + std::to_string(wanted.not_ready.size()) + " of " + std::to_string(wanted.count) +
         " models are not ready (" + names + "); --strict-readiness=false reports the server ready without them";
}

std::vector<std::string> inference_service::extensions() const {
  std::vector<std::string> list{"binary_tensor_data", "statistics", "model_repository"};
  if (system_shm_ != nullptr) list.emplace_back("system_shared_memory");
  if (cuda_shm_ != nullptr && cuda_shm_->available()) list.emplace_back("cuda_shared_memory");
  return list;
}

std::shared_ptr<const served_model> inference_service::find(std::string_view name, std::string_view version) const {
  // No model has such a name (the repository refuses them); said so, rather than "unknown", so a
  // client sees what it sent, escaped.
  if (has_control_character(name))
    throw bad_request("model name '" + quote_text(name) + "' holds a control character; model names never do");
  auto model = repository_.find(name);
  if (model == nullptr) throw request_error(error_status::not_found, "unknown model '" + quote_text(name) + "'");
  if (!version.empty() && version != model_version)
    throw request_error(error_status::not_found, "model '" + quote_text(name) + "' has no version '" +
                                                     quote_text(version) + "' (its only version is " +
                                                     std::string(model_version) + ")");
  return model;
}

std::shared_ptr<const served_model> inference_service::find_ready(std::string_view name,
                                                                  std::string_view version) const {
  auto model = find(name, version);
  if (const auto fault = first_device_fault())
    throw request_error(error_status::unavailable, device_fault_reason(*fault));
  if (!model->ready())
    throw request_error(error_status::unavailable, "model '" + quote_text(name) + "' is not ready: " + model->failure);
  return model;
}

namespace {

void check_control_allowed(const model_repository& repository, std::string_view action) {
  if (repository.mode() == model_control_mode::none)
    throw request_error(error_status::bad_request,
                        "explicit model " + std::string(action) +
                            " is not allowed: the server runs with --model-control-mode none (start it with "
                            "--model-control-mode explicit or poll)");
}

}  // namespace

void inference_service::load_model(std::string_view name) {
  check_control_allowed(repository_, "load");
  if (intake_.draining()) throw request_error(error_status::unavailable, "the server is shutting down");
  repository_.load(name);
}

void inference_service::unload_model(std::string_view name) {
  check_control_allowed(repository_, "unload");
  repository_.unload(name);
}

shm_registry& inference_service::allowed_system_shm() const {
  if (system_shm_ == nullptr)
    throw request_error(error_status::forbidden,
                        "system shared memory is not allowed on this server (start it with --allow-client-shm)");
  return *system_shm_;
}

cuda_shm_registry& inference_service::allowed_cuda_shm() const {
  if (cuda_shm_ == nullptr)
    throw request_error(error_status::forbidden,
                        "CUDA shared memory is not allowed on this server (start it with --allow-client-shm)");
  return *cuda_shm_;
}

void inference_service::infer(infer_request request, const std::shared_ptr<const served_model>& found,
                              infer_callback done) {
  const served_model& model = *found;
  submission work;
  // Shared-memory inputs and outputs: look the regions up and check every range first.
  const bool uses_shm = uses_shared_memory(request);
  if (uses_shm) {
    if (system_shm_ == nullptr)
      throw request_error(error_status::forbidden,
                          "the request uses shared memory, which this server does not allow (start it with "
                          "--allow-client-shm)");
    resolve_shared_memory(request, *system_shm_, cuda_shm_, work.output_destinations, work.pinned_regions);
  }
  work.plan = plan_request(model.signature, request);
  check_index_values(model.signature, request);
  if (uses_shm) check_output_ranges(model.signature, work.plan, request, work.output_destinations);
  // The shorter of the server's timeout and the client's; a client cannot wait longer than the
  // server allows.
  const auto positive = [](std::optional<std::chrono::microseconds> t) { return t && t->count() > 0; };
  if (positive(request.timeout)) work.timeout = request.timeout;
  if (request_timeout_.count() > 0 && !(positive(work.timeout) && *work.timeout < request_timeout_))
    work.timeout = request_timeout_;
  work.request = std::move(request);
  model.scheduler->submit(std::move(work), std::move(done));
}

}  // namespace ferry::serve
