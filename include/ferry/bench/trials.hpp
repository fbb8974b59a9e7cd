// A cell measured as several trials, as nvbench separates them: each trial makes its buffers
// afresh, warms up and samples on its own. The trials of a run's cells are spread over the run in
// rounds, so what moves over minutes (host load, where buffers landed, which cell ran before)
// shows as a spread between trials, and moves every cell alike, instead of showing up as a
// difference between two runs or between two strategies of one run.
//
// The scheduling and the rule for more trials are pure, so they are tested without a GPU; the
// cells themselves (src/bench/measure/cell_trials.hpp) make sessions and run requests.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/bench/stopping.hpp"

namespace ferry::bench {

enum class trial_schedule {
  // Round by round: each round runs one trial of every cell that wants one, in round_order. Each
  // cell's trials are spread over the whole run, and a stretch where the host ran slow lands on
  // every cell alike, so the ranking of a group's strategies is fair. A cell is one trial at a
  // time, whatever it runs inside (one request at a time, or clients at depth): cells never run
  // at once, so the interleaving costs nothing but keeping the run's workloads loaded.
  interleaved,
  // Each cell's trials back to back, one cell after another (what a single cell run does).
  sequential,
};

[[nodiscard]] std::string_view to_string(trial_schedule s) noexcept;

// The order of `cells` cells in round `round`: rotated by the round and reversed every other
// round, so a cell runs at different points of a round and after different neighbours.
[[nodiscard]] std::vector<std::size_t> round_order(std::size_t cells, std::size_t round);

// One trial's share of a cell's limits: the noise target max_noise * sqrt(min_trials / 2) (the
// min_trials trials pooled then reach max_noise / sqrt(2), so that the noise between them, as large
// when nothing drifts and known only roughly, stays under max_noise too), and min_samples,
// min_seconds and max_seconds shared among min_trials. A cell noisy within its trials runs min_trials long ones to its
// time cap: more, shorter trials would add warm-ups, not samples, and its noise is the within noise, known as good as
// exactly. A cell quiet within but drifting between trials stops each trial early and gets more of them (up to
// max_trials), which is what a spread between trials needs.
[[nodiscard]] sampling_limits trial_limits(const sampling_limits& cell) noexcept;

enum class trials_decision {
  more,       // fewer than min_trials, or noisier than max_noise with trials and time left
  settled,    // min_trials run and the judged noise is at most max_noise
  trial_cap,  // max_trials run, still noisy
  time_cap,   // max_seconds of measuring spent, still noisy
};

// Whether a cell wants another trial after `trials` of them, `seconds` of measuring in all, with
// `noise` its judged noise (the larger of within and between trials).
[[nodiscard]] trials_decision decide_trials(const sampling_limits& limits, std::size_t trials, double seconds,
                                            double noise) noexcept;

// A trial's error as a report says it. unsupported is the platform's refusal (not a failure);
// out of memory ("out of memory: ...") and every other error (its message) are failures: the cell
// is reported failed with the reason.
struct cell_failure {
  std::string reason;
  bool failed = true;
};
[[nodiscard]] cell_failure describe_failure(const std::exception_ptr& error);

// A cell as the scheduler sees it.
class trial_cell {
 public:
  virtual ~trial_cell() = default;
  // Whether it wants another trial (false once settled, capped, refused or failed).
  [[nodiscard]] virtual bool wants_trial() const = 0;
  // Runs one trial; may throw (run_trials turns that into fail()).
  virtual void run_trial() = 0;
  // Ends the cell with a refusal or a failure; it wants no more trials.
  virtual void fail(cell_failure why) = 0;
  // Ends the cell where it is, for a reason outside it (the GPU faulted in another cell): the
  // trials it ran stay its result, with `why` noted; a cell with none fails with `why`.
  virtual void stop(std::string why) = 0;
  // "reduce 19MB pinned, trial 2", for progress lines.
  [[nodiscard]] virtual std::string describe() const = 0;
};

// Runs trials until no cell wants more. Every trial runs inside a boundary: an exception of any
// kind ends that cell (fail) and the run goes on with the others, except a device fault
// (ferry/core/device_fault.hpp): the GPU is then lost to the process, so that cell fails, every other
// cell stops where it is (stop), and the device_fault is rethrown for the caller to report what
// was measured before. `progress` is called before each trial with the cell's describe().
void run_trials(std::span<trial_cell* const> cells, trial_schedule schedule,
                const std::function<void(const std::string&)>& progress = {});

}  // namespace ferry::bench
