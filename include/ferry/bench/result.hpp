// The machine-readable outcome of `ferry bench`: plain data, kept apart from every rendering
// (terminal table, markdown, JSON, CSV, plots), as nvbench and nvbandwidth do.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ferry/gpu_clocks.hpp"

namespace ferry::bench {

// Robust summary of one series of samples (microseconds unless the field says otherwise).
struct sample_stats {
  std::size_t count = 0;
  double median = 0;
  double p90 = 0;
  double p99 = 0;
  double min = 0;
  double max = 0;
  double iqr = 0;   // p75 - p25
  double mean = 0;
};

// Unified-memory traffic seen by CUPTI, per request (see strategy_result::um_note for how).
struct um_traffic {
  std::uint64_t bytes_host_to_device = 0;
  std::uint64_t bytes_device_to_host = 0;
  std::uint64_t gpu_page_faults = 0;
  std::uint64_t cpu_page_faults = 0;
};

// A run measured in the same cell as a strategy, one request of each in turn, so that a drift of
// the host or the GPU during the cell moves both alike:
//  - the recipe: the strategy's own steps written as directly as the CUDA runtime allows (no
//    session, no slots, one stream); the gap between the two is ferry's cost, not the platform's;
//  - the floor: the engine alone on device-resident inputs, what no strategy can beat.
struct side_run {
  std::string steps;           // what it runs, in words
  std::size_t iterations = 0;
  sample_stats latency_us;     // measured as the strategy's latency: after the fill, to outputs read
  double noise = 0;            // median_noise of latency_us
  bool output_checked = false;
  bool output_matches = false;
  std::string check_detail;
};

// One trial of a cell, as nvbench separates them: buffers made afresh, its own warm-up and
// samples. A cell's trials are spread over the run (ferry/bench/trials.hpp), so their spread shows
// what moves over minutes (host load, where buffers landed, which cell ran before), which the
// samples of one stretch cannot.
struct trial_figures {
  double started_seconds = 0;  // when the trial started, after the run's first trial
  double wall_seconds = 0;     // its measuring loop (warm-up and set-up not counted)
  std::size_t iterations = 0;  // its latency samples
  double median_us = 0;        // its median latency
  double noise = 0;            // median_noise of its samples
  double throughput_per_s = 0;
  double throughput_noise = 0;
};

// One (workload, size, strategy) cell of the matrix.
struct strategy_result {
  std::string strategy;
  std::string engine;             // "reduce", "mlp:4x4096", "u8-normalize+reduce", ...
  std::size_t input_bytes = 0;    // per request, all inputs together
  std::size_t output_bytes = 0;   // per request, all outputs together
  int inflight = 1;
  int clients = 1;
  // GPUs the requests were spread over, one replica of `inflight` slots on each. Empty or one
  // entry: a single-GPU run, whose reports look as they always did.
  std::vector<int> devices;
  bool graph = false;
  bool warmed_up = true;
  // How the CPU wrote each request's input: "streaming" (non-temporal stores, bench's default) or
  // "cached" (ordinary stores). A pinned upload runs ~9% slower after cached writes, so results
  // are comparable only at the same setting.
  std::string input_writes = "streaming";

  // Set when the strategy was refused or failed; every other field is then meaningless.
  std::optional<std::string> refused;
  // The reason in `refused` is an error (out of memory, a CUDA or engine failure), not the
  // platform's refusal: the run goes on, and its exit code says a cell failed.
  bool failed = false;

  std::size_t iterations = 0;
  double wall_seconds = 0;
  sample_stats latency_us;    // end to end on the host: input written -> output readable
  sample_stats fill_us;       // CPU writing the fresh input (not part of latency; faults show here)
  sample_stats h2d_us;        // CUDA-event breakdown of the device side
  sample_stats compute_us;
  sample_stats d2h_us;
  // Host time spent enqueueing one request's work (the engine's launches included). As large as
  // compute_us, the engine is launch-bound: the GPU waits on the CPU, and the CPU's speed is in
  // every figure of the cell.
  sample_stats enqueue_us;
  double cold_first_us = 0;   // the first request, kept out of the statistics
  double cold_first_percentile = 0;  // percent of timed requests no faster than the first one
  double throughput_per_s = 0;
  double h2d_gbps = 0;        // input_bytes / median h2d time (0 where nothing is copied)
  double d2h_gbps = 0;
  double relative_iqr = 0;    // iqr / median of latency: the spread of requests
  // How well the cell's figures are known: median_noise of latency (the relative standard error
  // of the median), and rate_noise of throughput.
  // Both pool the samples of every trial: the noise within trials.
  double noise = 0;
  double throughput_noise = 0;
  // The noise between trials: the standard error of the trials' mean figure relative to it
  // (trial_noise in stats.hpp), 0 with fewer than two trials (and in older reports). What one run
  // cannot show of another shows here; stopping, the noisy flag and compare use the larger of the
  // two noises (judged_noise).
  double trial_noise = 0;
  double throughput_trial_noise = 0;
  std::vector<trial_figures> trials;
  // How the cell's trials ran beside the run's other cells: "interleaved" (in rounds, one trial of
  // every cell per round in a changing order, so a drift moves every cell alike) or "sequential"
  // (each cell's trials back to back); empty in older reports.
  std::string schedule;
  double max_noise = 0;       // the limit asked for (--max-noise)
  // The figure the cell is judged on (latency, or throughput for throughput cells) is noisier
  // than max_noise: sampling stopped at its cap first.
  bool noisy = false;
  std::string stopped;        // how sampling ended, in words
  // Device memory the cell held at the end of a trial's measurement (free memory before the trial
  // less free memory then, on its first GPU; the most over its trials): what `--inflight auto`
  // extrapolates the next depth's need from.
  std::size_t device_bytes_used = 0;

  std::optional<side_run> recipe;  // the strategy's steps by hand, measured beside it
  std::optional<side_run> floor;   // the engine on device-resident inputs, measured beside it
  std::string recipe_note;         // why there is no recipe or floor (several clients, ...)

  std::optional<clock_record> clocks;  // nullopt: see clocks_note
  std::string clocks_note;
  // The host CPU's speed over the cell: a fixed piece of CPU work (~20 us on a 3 GHz core), timed
  // beside the requests. Its median, and how far it moved (p75 / p25 - 1) while the cell ran.
  double host_probe_us = 0;
  double host_probe_spread = 0;
  // The CUDA driver's speed over the cell, likewise: eight event records on an idle stream and a
  // synchronize. Launch-bound engines and small requests move with it.
  double cuda_probe_us = 0;
  double cuda_probe_spread = 0;

  bool output_checked = false;
  bool output_matches = false;
  std::string check_detail;   // first mismatch, or how many elements were compared

  std::vector<std::string> notes;  // visible fallbacks and caveats (e.g. graph capture failed)

  std::optional<um_traffic> um;  // nullopt: see um_note
  std::string um_note;           // why counters are missing, where they are
};

struct machine_info {
  std::string gpu_name;
  std::string platform;          // to_string(platform_class)
  std::string pcie;              // "Gen5 x16" or ""
  int driver_version = 0;
  int runtime_version = 0;
  double link_peak_h2d_gbps = 0;  // measured pinned peak (0 when not measured)
  double link_peak_d2h_gbps = 0;
  double host_probe_us = 0;  // the probes' times when the run started (see strategy_result)
  double cuda_probe_us = 0;
};

// Whether the profile's advice held on one cell group (an engine at a size) where several
// strategies ran: what ferry::choose picked from this machine's profile against the best measured
// (ferry/bench/advice_check.hpp makes them). A pick within advice_tolerance of the best counts as
// a good one, and so does a pick the same as the best within their noise: another run could have
// ranked them the other way.
inline constexpr double advice_tolerance = 0.05;

struct advice_check {
  std::string engine;
  std::size_t input_bytes = 0;
  std::string picked;         // the profile's pick
  std::string best;           // the best strategy measured (empty when none ran with checked outputs)
  double picked_value = 0;    // median µs (latency) or req/s (throughput); 0 when the pick did not run
  double best_value = 0;
  // How much worse the pick is than the best (0.03: 3% slower, or 3% fewer requests per second);
  // nullopt when the pick was not measured or its outputs did not match.
  std::optional<double> shortfall;
  // The shortfall the two figures' noise could make on its own: the threshold compare uses for
  // them (difference_threshold of both judged noises); 0 where they carry no noise.
  double noise = 0;
  std::string note;           // why there is no shortfall, when there is none
  [[nodiscard]] bool within(double tolerance = advice_tolerance) const noexcept {
    return shortfall && *shortfall <= std::max(tolerance, noise) + 1e-9;  // 420 / 400 - 1 is 0.05 and a bit
  }
};

struct bench_report {
  std::string date;     // ISO 8601, UTC
  std::string command;  // the command line that produced it
  machine_info machine;
  std::vector<strategy_result> results;
  std::string objective;       // "latency" or "throughput"
  std::string winner;          // best strategy for the objective across the matrix
  std::string recommendation;  // one paragraph: what to use and why
  std::vector<advice_check> advice_checks;  // with a profile and several strategies per cell
};

}  // namespace ferry::bench
