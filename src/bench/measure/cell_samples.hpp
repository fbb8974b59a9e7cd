// What the request loops of a cell record, for cell_result to summarise. Private to src/bench.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

#include "bench/measure/output_checks.hpp"
#include "ferry/bench/stats.hpp"

namespace ferry::bench {

using bench_clock = std::chrono::steady_clock;

[[nodiscard]] inline double micros(bench_clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

// The --slowdown test hook's host half: a request that ended at `end` after starting at `start`
// ends only once `fraction` of its time more has passed (spinning: a sleep hands the core away and
// wakes late). Where the GPU half (gpu_delay.hpp) already made the request longer by
// `gpu_delay_us`, `fraction` of the GPU's own time, the wait is shortened by what that delay gave
// (and by `fraction` of it): the request ends `fraction` later than it would have without either,
// no more. Returns when it ended; without a slowdown, `end` itself.
[[nodiscard]] inline bench_clock::time_point stretched(bench_clock::time_point start, bench_clock::time_point end,
                                                       double fraction, double gpu_delay_us = 0) {
  if (!(fraction > 0)) return end;
  const double wait_us = micros(end - start) * fraction - gpu_delay_us * (1 + fraction);
  if (!(wait_us > 0)) return end;
  const auto until =
      end + std::chrono::duration_cast<bench_clock::duration>(std::chrono::duration<double, std::micro>(wait_us));
  auto now = bench_clock::now();
  while (now < until) now = bench_clock::now();
  return now;
}

// The timed requests of one series in one trial: a strategy's requests through its session, with
// their device-side breakdown; a recipe's or the floor's only have latency. Plain data, moved into
// the cell's trial records once the trial is over (a loop whose clients record at once guards it
// with a lock of its own).
struct cell_samples {
  std::vector<double> latency, fill, h2d, compute, d2h, enqueue;  // µs
  std::vector<double> gpu;           // µs: the GPU's span of each event-timed request (stage_times::total_ms)
  std::vector<double> completed_at;  // seconds after the clock started, for the rate's noise
  std::optional<double> cold_first;  // the first timed request, kept out of the statistics
  std::size_t requests = 0;          // all completed, the cold one included (throughput counts it)
  // The loop's own rate where requests of other series run in between: the sum of this series'
  // fill + latency, the time a loop of it alone would have taken.
  double busy_seconds = 0;
  bench_clock::time_point start{};
  bench_clock::time_point last_done{};
  std::vector<double> host_probe;  // µs of the host probe, timed beside the requests
  std::vector<double> cuda_probe;  // µs of the CUDA-call probe, likewise
  std::vector<double> host_copy;   // GB/s of the host memory-copy probe, about every 0.1 s
  check_tally checks;
  stop_decision stopped = stop_decision::keep_going;
};

}  // namespace ferry::bench
