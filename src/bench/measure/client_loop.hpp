// Closed-loop clients: `clients` threads, each keeping its share of the slots in flight (it fills
// and submits request k+1 while request k is still on the GPU, which is what --inflight buys),
// until the stopping criterion says enough. Private to src/bench.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>

#include "bench/measure/cell_samples.hpp"
#include "bench/measure/cell_target.hpp"
#include "bench/measure/output_checks.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/bench/stopping.hpp"

namespace ferry::bench {

class client_loop {
 public:
  client_loop(const cell_target& target, const run_options& options, output_checks& checks,
              const stopping_criterion& stop);

  // Runs the clients (each warmed up first when options.warmup) and returns when they are done.
  // A client whose request throws (out of memory in an engine, a CUDA error) stops every client;
  // once all have stopped and their requests in flight are done, run() rethrows that first error
  // on the calling thread, so a cell fails instead of the process.
  void run();
  [[nodiscard]] cell_samples& samples() noexcept { return samples_; }

 private:
  struct in_flight {
    pending_slot pending;
    std::optional<std::uint64_t> seq;  // none: a warm-up request, not recorded
    bench_clock::time_point submitted;
    double fill_us;
    byte_copies inputs;  // copies, only for checked requests
  };

  // The clients' start line: everyone waits at it after the warm-up; a client that fails before
  // reaching it leaves the line, so the others are not left waiting for it.
  struct start_line {
    std::function<void()> wait;
    std::function<void()> leave;
  };
  void client(const start_line& start);
  void run_client(const start_line& start);
  void warm_up();
  [[nodiscard]] std::size_t depth() const;
  in_flight start_request(filling_slot filling, std::optional<std::uint64_t> seq);
  double finish_request(in_flight r);
  void record(std::uint64_t seq, double latency_us, double fill_us, const stage_times& t,
              bench_clock::time_point done_at);

  const cell_target& target_;
  const run_options& options_;
  output_checks& checks_;
  const stopping_criterion& stop_rule_;
  bool resident_;
  cell_samples samples_;
  std::mutex record_mutex_;  // several client threads record at once
  std::mutex error_mutex_;
  std::exception_ptr error_;  // the first client's error
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> next_{0};
  std::atomic<std::uint64_t> warmups_{0};
  std::atomic<std::uint64_t> sink_{0};
};

}  // namespace ferry::bench
