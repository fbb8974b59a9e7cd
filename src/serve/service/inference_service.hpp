// What every front end (HTTP, gRPC) asks of the server: health, model lookup with the protocol's
// errors, inference (look the model up, check the request, queue it), and the intake that both
// front ends admit requests through (the in-flight memory budget, and shutdown).
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "serve/admission/request_intake.hpp"
#include "serve/control/model_repository.hpp"
#include "serve/vocabulary/inference.hpp"

namespace ferry::serve {

class shm_registry;
class cuda_shm_registry;

inline constexpr std::string_view server_name = "ferry";

// What server readiness asks of the models (`ferry serve --strict-readiness`).
enum class readiness { strict, per_model };

class inference_service {
 public:
  // The registries are null when client shared memory is not allowed (--allow-client-shm). A
  // request waits at most `request_timeout` for a worker (0: no limit), or its own timeout when
  // that is shorter.
  // Requests in flight may hold `inflight_bytes` at once (request_intake).
  inference_service(model_repository& repository, shm_registry* system_shm, cuda_shm_registry* cuda_shm,
                    std::chrono::microseconds request_timeout = {},
                    std::size_t inflight_bytes = default_inflight_budget(),
                    readiness readiness_rule = readiness::strict);

  // Live once constructed, until a GPU faults (ferry/core/device_fault.hpp: the process cannot recover
  // its context, so an orchestrator must restart it). Ready, until the server begins to shut
  // down or a GPU faults, when every model loaded (strict, Triton's default: a load balancer then
  // never sends traffic to a server missing a model), or whatever failed (per_model: only the
  // failed models are not ready).
  [[nodiscard]] bool live() const noexcept;
  [[nodiscard]] bool ready() const { return not_ready_reason().empty(); }
  // Why the server is not ready ("the server is shutting down", "strict readiness: 2 of 7 models
  // are not ready: a, b"), or empty when it is.
  [[nodiscard]] std::string not_ready_reason() const;

  // The protocol extensions this server speaks, for server metadata.
  [[nodiscard]] std::vector<std::string> extensions() const;

  // Throws request_error(not_found) for an unknown model or a version other than model_version.
  // The model stays valid while the pointer is held, even when it is unloaded meanwhile.
  [[nodiscard]] std::shared_ptr<const served_model> find(std::string_view name, std::string_view version) const;
  // As find(), and throws request_error(unavailable) with the load failure when not ready, and
  // with the fault once a GPU has faulted.
  [[nodiscard]] std::shared_ptr<const served_model> find_ready(std::string_view name, std::string_view version) const;

  // The repository extension's load and unload (model_repository::load/unload). Refused with
  // request_error(bad_request) under --model-control-mode none, as Triton refuses them.
  void load_model(std::string_view name);
  void unload_model(std::string_view name);

  // Checks the request against `model` (the front end found it once, find_ready, and holds it
  // until the answer) and queues it; `done` receives the response, or the request_error of a
  // failed run or of a timeout, on a thread of the scheduler (model_scheduler.hpp). Each input is
  // checked once: here, unless the front end checked it as it decoded it (inputs_checked). Throws
  // request_error, without calling `done`, for a bad request, or unavailable when the model's
  // queue is full.
  void infer(infer_request request, const std::shared_ptr<const served_model>& model, infer_callback done);

  [[nodiscard]] request_intake& intake() noexcept { return intake_; }
  [[nodiscard]] const request_intake& intake() const noexcept { return intake_; }

  [[nodiscard]] const model_repository& repository() const noexcept { return repository_; }
  [[nodiscard]] model_repository& repository() noexcept { return repository_; }
  [[nodiscard]] shm_registry* system_shm() const noexcept { return system_shm_; }
  [[nodiscard]] cuda_shm_registry* cuda_shm() const noexcept { return cuda_shm_; }
  // The registries for the shared-memory control calls of both protocols; request_error(forbidden)
  // naming --allow-client-shm where this server does not allow client shared memory.
  [[nodiscard]] shm_registry& allowed_system_shm() const;
  [[nodiscard]] cuda_shm_registry& allowed_cuda_shm() const;

 private:
  model_repository& repository_;
  readiness readiness_;
  shm_registry* system_shm_;
  cuda_shm_registry* cuda_shm_;
  std::chrono::microseconds request_timeout_;
  request_intake intake_;
};

}  // namespace ferry::serve
