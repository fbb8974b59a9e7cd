// Turns what a cell's trials recorded into the plain data of its report row. Private to src/bench.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/measure/cell_samples.hpp"
#include "ferry/bench/result.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/bench/trials.hpp"
#include "ferry/device/gpu_clocks.hpp"

namespace ferry::bench {

// What one trial of a cell recorded: the samples of every series it ran, and its circumstances.
struct trial_record {
  cell_samples strategy;
  std::optional<cell_samples> recipe;  // measured beside it, one request at a time
  std::optional<cell_samples> floor;
  // One request at a time: the series' rate is its own requests over their own time (fill and
  // latency), since requests of other series ran in between.
  bool paired = false;
  double started_seconds = 0;  // after the run started
  double wall_seconds = 0;     // the measuring loop
  std::optional<clock_record> clocks;
  std::size_t device_bytes_used = 0;
  // Several GPUs: each one's share of the timed requests, in the order of options.devices.
  std::vector<std::size_t> requests_per_gpu;
};

// A cell's identity, as every report names it: the workload, the strategy and the settings it ran
// with (a group that could not run reports failed cells of the same identity).
[[nodiscard]] result_identity cell_identity(std::string engine, std::optional<strategy_kind> strategy,
                                            const run_options& options, trial_schedule schedule);

// The cell's result: `cell` (its identity and what its trials learnt of it) with the statistics
// of its trials: every series' samples pooled over the trials, each trial's figures, the noise
// within and between trials. `how` says why the trials ended; `stop` is a trial's own criterion,
// in words.
[[nodiscard]] strategy_result assemble_result(const std::vector<trial_record>& trials, const run_options& options,
                                              trials_decision how, const std::string& stop, strategy_result cell);

// The judged noise of a cell's figures so far (the larger of within and between its trials), for
// deciding on another trial.
[[nodiscard]] double judged_noise_of(const std::vector<trial_record>& trials, bool throughput);

// How much the host probe may move during a cell (p75 over p25) before the cell is flagged: the
// host's speed is then in its figures in a way a later run will not repeat.
inline constexpr double host_change_limit = 0.10;
// The CUDA probe is a few microseconds of driver calls, noisier than the integer chain.
inline constexpr double cuda_change_limit = 0.25;

// p75 / p25 - 1 of samples in any order.
[[nodiscard]] double quartile_spread(std::vector<double> samples);

// Clock records of several trials as one: ranges over all, every reason seen, changed when any
// trial's changed or the trials ran at different clocks.
[[nodiscard]] std::optional<clock_record> merge_clocks(const std::vector<trial_record>& trials);

}  // namespace ferry::bench
