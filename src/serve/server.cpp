#include "serve/server.hpp"

#include <csignal>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "serve/execution_platform.hpp"
#include "serve/inference_service.hpp"
#include "serve/model_repository.hpp"
#include "serve/cuda_shm_registry.hpp"
#include "serve/shm_registry.hpp"

namespace ferry::serve {
namespace {

// Blocks SIGINT/SIGTERM in this thread and every thread started after it, so sigwait receives
// them instead of a random worker.
sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

}  // namespace

void run_server(const server_options& options) {
  const sigset_t signals = block_stop_signals();
  const execution_platform platform = detect_platform(options.devices, options.profile, options.backend_directory);
  if (platform.gpus.empty())
    std::cout << "ferry serve: " << platform.no_gpu_reason
              << "; running on the CPU: built-in models by their host references, model files where their "
                 "backend computes on the CPU\n";
  const model_repository repository(options.model_repository, platform, std::cout);
  std::unique_ptr<shm_registry> shm;
  std::unique_ptr<cuda_shm_registry> cuda_shm;
  if (options.allow_client_shm) {
    shm = std::make_unique<shm_registry>(platform.gpus.empty() ? cuda_registration::off : cuda_registration::on,
                                         options.max_shm_regions);
    // Regions may be registered on any GPU of the machine; a request reading one on a GPU the
    // model does not run on is refused by its scheduler, naming both.
    cuda_shm = std::make_unique<cuda_shm_registry>(platform.gpus.empty() ? 0 : platform.device_count,
                                                   platform.no_gpu_reason, options.max_cuda_shm_regions);
  }
  inference_service service(repository, shm.get(), cuda_shm.get(), options.request_timeout);

  // Both ports are bound before anything serves, so a port in use fails the start cleanly.
  http_frontend http(service, options.http);
  const int http_port = http.bind();
  grpc_frontend grpc(service, options.grpc);
  const int grpc_port = grpc.start();
  std::thread http_thread([&http] { http.serve_blocking(); });
  std::cout << fmt::format("ferry serve: HTTP on {}:{}\n", options.http.host, http_port);
  std::cout << fmt::format("ferry serve: gRPC on {}:{}\n", options.grpc.host, grpc_port);
  std::cout << "ferry serve: serving" << std::endl;

  int received = 0;
  sigwait(&signals, &received);
  std::cout << "ferry serve: stopping (" << (received == SIGINT ? "SIGINT" : "SIGTERM") << ")\n" << std::flush;
  grpc.stop();
  http.stop();
  http_thread.join();
}

}  // namespace ferry::serve
