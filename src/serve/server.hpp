// `ferry serve`: the whole server, from a model repository to listening front ends, until
// SIGINT or SIGTERM.
//
// Shutdown: the first SIGTERM or SIGINT stops both protocols taking new work at once (readiness
// false; new inference requests 503 over HTTP, every new gRPC call UNAVAILABLE), finishes every
// request already admitted, then returns. A second signal meanwhile exits the process at once
// with 128 + its number. `drain_timeout` bounds the drain: requests still in flight past it are
// left unanswered and the process exits 1 (a pod's terminationGracePeriodSeconds should exceed it).
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "serve/control/model_repository.hpp"
#include "serve/shm/region_table.hpp"
#include "serve/transport/grpc/grpc_frontend.hpp"
#include "serve/transport/http/http_frontend.hpp"

namespace ferry::serve {

struct server_options {
  std::filesystem::path model_repository;
  http_options http;
  grpc_options grpc;
  bool allow_client_shm = false;
  // With client shared memory: the start every system shared-memory key must have (after its
  // leading '/'); empty: any key (shm_registry.hpp).
  std::string client_shm_key_prefix;
  std::size_t max_shm_regions = default_max_regions;       // system shared-memory regions at once
  std::size_t max_cuda_shm_regions = default_max_regions;  // CUDA shared-memory regions at once
  // Bytes the inference requests in flight may hold at once, across HTTP and gRPC (request_intake);
  // 0: default_inflight_budget().
  std::size_t max_inflight_bytes = 0;
  // What the requests of one client network may hold of it at once (request_intake); 0: a quarter
  // of what requests are admitted into.
  std::size_t max_inflight_bytes_per_peer = 0;
  // Model folders and config files that are symbolic links leading outside the repository, and
  // relative model-file paths climbing out of it, are refused unless this is set.
  bool allow_repository_symlinks = false;
  // Which models load when (model_repository.hpp): --model-control-mode, --load-model.
  model_control_mode model_control = model_control_mode::none;
  std::vector<std::string> load_models;
  // The threads one model and all of them may run (load_check.hpp).
  load_limits model_limits;
  // How long a load or unload call waits for its outcome before it is answered timed out.
  std::chrono::milliseconds model_control_timeout{30'000};
  // Poll mode: how often the repository is scanned for added, changed and removed models.
  std::chrono::seconds repository_poll{15};
  // The longest the drain on the first SIGTERM/SIGINT waits for requests in flight (0: no limit).
  std::chrono::seconds drain_timeout{0};
  // Server readiness needs every model loaded (Triton's default); false: only the failed models
  // are not ready.
  bool strict_readiness = true;
  // After the last request in flight ends, how long the server waits before it gives the memory
  // requests used back to the system.
  std::chrono::milliseconds memory_release_delay{1000};
  // The longest a request waits for a worker of its model (0: no limit); see inference_service.
  std::chrono::milliseconds request_timeout{60'000};
  std::string devices = "all";  // the GPUs models run on (--devices, as ferry bench reads it)
  // The profile models configured with "auto" pick from (--profile, written by ferry calibrate);
  // empty: the first serving GPU's own in the cache folder.
  std::filesystem::path profile;
  // The folder searched first for model files' backends (--backend-directory; then
  // FERRY_BACKEND_PATH and the folder beside the program: ferry/engines/backend.hpp).
  std::filesystem::path backend_directory;
};

// Runs the server until SIGINT/SIGTERM. Prints one line per model, a notice when it runs on the
// CPU, and "HTTP on HOST:PORT" and "gRPC on HOST:PORT" (the bound ports, also when asked for
// port 0) with the interfaces that reach them, then "serving". Throws ferry::error when `devices` names GPUs the
// machine lacks (no_device when it has none), the repository cannot be read or a port cannot be bound.
void run_server(const server_options& options);

}  // namespace ferry::serve
