#include "serve/server.hpp"

#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <future>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "ferry/core/device_fault.hpp"
#include "serve/admission/memory_release.hpp"
#include "serve/control/model_repository.hpp"
#include "serve/execution/execution_platform.hpp"
#include "serve/service/inference_service.hpp"
#include "serve/shm/cuda_shm_registry.hpp"
#include "serve/shm/shm_registry.hpp"
#include "serve/transport/listen_addresses.hpp"
#include "serve/vocabulary/device_fault_report.hpp"

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

const char* signal_name(int signal) { return signal == SIGINT ? "SIGINT" : "SIGTERM"; }

// How long a server whose GPU faulted waits for the requests it can still answer (on the CPU or
// another GPU) before it exits for a restart.
constexpr std::chrono::seconds fault_drain_limit{10};

// Waits for SIGINT/SIGTERM (blocked by block_stop_signals) until `done` is ready; returns the
// signal, 0 once `done` is, or -1 once `deadline` passed.
int wait_for_signal_or(const sigset_t& signals, const std::future<void>& done,
                       std::optional<std::chrono::steady_clock::time_point> deadline) {
  for (;;) {
    if (done.wait_for(std::chrono::seconds(0)) == std::future_status::ready) return 0;
    if (deadline && std::chrono::steady_clock::now() >= *deadline) return -1;
    const timespec poll{0, 50'000'000};
    if (const int received = sigtimedwait(&signals, nullptr, &poll); received > 0) return received;
  }
}

// Poll mode: rescans the repository every `period` on its own thread (none when period is 0).
class repository_poller {
 public:
  repository_poller(model_repository& repository, std::chrono::seconds period) : repository_(repository) {
    if (period.count() > 0) thread_ = std::thread([this, period] { run(period); });
  }
  ~repository_poller() { stop(); }
  repository_poller(const repository_poller&) = delete;
  repository_poller& operator=(const repository_poller&) = delete;

  void stop() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run(std::chrono::seconds period) {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
      lock.unlock();
      repository_.rescan();  // a model's failure is kept as its state; rescan itself never throws
      lock.lock();
    }
  }

  model_repository& repository_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace

void run_server(const server_options& options) {
  const sigset_t signals = block_stop_signals();
  const execution_platform platform = detect_platform(options.devices, options.profile, options.backend_directory);
  if (platform.gpus.empty())
    std::cout << "ferry serve: " << platform.no_gpu_reason
              << "; running on the CPU: built-in models by their host references, model files where their "
                 "backend computes on the CPU\n";
  model_repository repository(options.model_repository, platform, std::cout,
                              {.follow_outside_links = options.allow_repository_symlinks,
                               .mode = options.model_control,
                               .startup_models = options.load_models,
                               .limits = options.model_limits,
                               .control_timeout = options.model_control_timeout});
  repository_poller poller(repository, options.model_control == model_control_mode::poll ? options.repository_poll
                                                                                         : std::chrono::seconds(0));
  std::unique_ptr<shm_registry> shm;
  std::unique_ptr<cuda_shm_registry> cuda_shm;
  if (options.allow_client_shm) {
    shm = std::make_unique<shm_registry>(platform.gpus.empty() ? cuda_registration::off : cuda_registration::on,
                                         options.max_shm_regions, options.client_shm_key_prefix);
    // Regions may be registered on any GPU of the machine; a request reading one on a GPU the
    // model does not run on is refused by its scheduler, naming both.
    cuda_shm = std::make_unique<cuda_shm_registry>(platform.gpus.empty() ? 0 : platform.device_count,
                                                   platform.no_gpu_reason, options.max_cuda_shm_regions);
  }
  inference_service service(repository, shm.get(), cuda_shm.get(), options.request_timeout,
                            options.max_inflight_bytes > 0 ? options.max_inflight_bytes : default_inflight_budget(),
                            options.strict_readiness ? readiness::strict : readiness::per_model);
  if (const auto why = service.not_ready_reason(); !why.empty()) std::cout << "ferry serve: not ready: " << why << '\n';
  // Memory freed by requests is kept for the next one while load lasts, and given back once the
  // server has been idle a moment.
  request_intake& intake = service.intake();
  idle_memory_release memory_release(options.memory_release_delay,
                                     [&intake] { return intake.requests_in_flight() == 0; });
  intake.on_idle([&memory_release] { memory_release.became_idle(); });

  // gRPC holds messages while they arrive, before the intake sees them: its part of the budget
  // is kept aside before either front end takes its limits from the rest.
  intake.set_aside(grpc_receive_bytes(options.grpc, intake.budget_bytes()));
  intake.set_peer_share(options.max_inflight_bytes_per_peer);
  // Both ports are bound before anything serves, so a port in use fails the start cleanly.
  http_frontend http(service, options.http);
  const int http_port = http.bind();
  grpc_frontend grpc(service, options.grpc);
  const int grpc_port = grpc.start();
  std::thread http_thread([&http] { http.serve_blocking(); });
  // Where clients can reach it, in words and by the interfaces' addresses (listen_addresses.hpp).
  std::cout << fmt::format("ferry serve: HTTP on {}:{} ({})\n", options.http.host, http_port,
                           describe_listening(options.http.host));
  std::cout << fmt::format("ferry serve: gRPC on {}:{} ({})\n", options.grpc.host, grpc_port,
                           describe_listening(options.grpc.host));
  if (shm)
    std::cout << "ferry serve: client shared memory allowed"
              << (options.client_shm_key_prefix.empty()
                      ? std::string(" for any key")
                      : " for keys starting with '" + options.client_shm_key_prefix + "'")
              << ", from clients on this machine, for objects of the client's own user\n";
  std::cout << fmt::format(
      "ferry serve: in-flight memory budget {} bytes ({} of them for gRPC messages arriving; {} at most for one "
      "client network's requests)\n",
      intake.budget_bytes(), intake.set_aside_bytes(), intake.peer_share_bytes());
  std::cout << fmt::format("ferry serve: memory from {}\n", allocator_description());
  std::cout << "ferry serve: serving" << std::endl;

  // Until a stop signal, or a GPU fault (ferry/core/device_fault.hpp): the process cannot use that GPU
  // again, so it drains what it can and exits for its supervisor to restart it.
  int received = 0;
  while (received == 0 && !device_faulted()) {
    const timespec poll{0, 100'000'000};
    if (const int s = sigtimedwait(&signals, nullptr, &poll); s > 0) received = s;
  }
  const bool faulted = received == 0;
  if (faulted)
    std::cout << "ferry serve: stopping: " << device_fault_reason(*first_device_fault())
              << "; answering the requests in flight, then exiting with code " << serve_exit_device_fault << std::endl;
  else
    std::cout << "ferry serve: stopping (" << signal_name(received)
              << "): no new requests; finishing those in flight (a second signal stops at once)" << std::endl;
  // Both protocols stop taking work now: the intake admits nothing (HTTP answers 503, readiness
  // is false), and gRPC refuses new calls while those accepted finish.
  intake.begin_draining();
  std::promise<void> drained;
  std::future<void> drained_future = drained.get_future();
  // gRPC's own shutdown waits until the admitted requests have ended: while it is in effect, a
  // new call can be cancelled (CANCELLED, which clients do not retry) instead of reaching
  // dispatch, which refuses it with UNAVAILABLE (which they retry elsewhere).
  std::thread drain([&] {
    intake.wait_until_idle();
    grpc.stop();
    http.stop();
    http_thread.join();
    drained.set_value();
  });
  poller.stop();  // no model loads or reloads while the server drains
  auto deadline = options.drain_timeout.count() > 0
                      ? std::optional(std::chrono::steady_clock::now() + options.drain_timeout)
                      : std::nullopt;
  // After a fault the requests on the lost GPU fail at once; the others get a short while.
  if (faulted)
    deadline = std::min(deadline.value_or(std::chrono::steady_clock::time_point::max()),
                        std::chrono::steady_clock::now() + fault_drain_limit);
  if (const int again = wait_for_signal_or(signals, drained_future, deadline); again != 0) {
    if (faulted) {
      std::cout << "ferry serve: exiting after the GPU fault, " << intake.requests_in_flight() << " requests unanswered"
                << std::endl;
      std::_Exit(serve_exit_device_fault);
    }
    if (again < 0) {
      std::cout << "ferry serve: the drain timeout of " << options.drain_timeout.count()
                << " s passed: exiting without finishing the " << intake.requests_in_flight() << " requests in flight"
                << std::endl;
      std::_Exit(1);
    }
    std::cout << "ferry serve: " << signal_name(again) << " again: exiting without finishing the "
              << intake.requests_in_flight() << " requests in flight" << std::endl;
    std::_Exit(128 + again);
  }
  drain.join();
  if (faulted) {
    // No cleanup: the models' contexts and backends would only fail (or abort) in the lost context.
    std::cout << "ferry serve: exiting after the GPU fault (code " << serve_exit_device_fault << ")" << std::endl;
    std::_Exit(serve_exit_device_fault);
  }
  std::cout << "ferry serve: stopped" << std::endl;
}

}  // namespace ferry::serve
