#include "ferry/bench/trials.hpp"

#include <algorithm>
#include <cmath>
#include <new>
#include <numeric>

#include "ferry/core/error.hpp"

namespace ferry::bench {

std::string_view to_string(trial_schedule s) noexcept {
  return s == trial_schedule::interleaved ? "interleaved" : "sequential";
}

std::vector<std::size_t> round_order(std::size_t cells, std::size_t round) {
  std::vector<std::size_t> order(cells);
  if (cells == 0) return order;
  for (std::size_t i = 0; i < cells; ++i) order[i] = (i + round) % cells;
  if (round % 2 == 1) std::reverse(order.begin(), order.end());
  return order;
}

sampling_limits trial_limits(const sampling_limits& cell) noexcept {
  const std::size_t min_trials = std::max<std::size_t>(1, cell.min_trials);
  sampling_limits trial = cell;
  // The trials pooled reach max_noise / sqrt(2), not max_noise: the noise between trials is
  // about as large as the pooled noise within them when nothing drifts, and from three trials it
  // is known only roughly (two degrees of freedom); at max_noise / sqrt(2) it stays under
  // max_noise in ~85% of undrifting cells instead of ~40%, so few cells take trials for nothing.
  // Each trial samples twice as long as at max_noise * sqrt(min_trials); a cell alone is as before.
  trial.max_noise = min_trials == 1 ? cell.max_noise : cell.max_noise * std::sqrt(static_cast<double>(min_trials) / 2);
  // Ten samples at least: fewer say little about a trial's own median.
  trial.min_samples = std::max<std::size_t>(10, (cell.min_samples + min_trials - 1) / min_trials);
  trial.min_seconds = cell.min_seconds / static_cast<double>(min_trials);
  trial.max_seconds = std::max(trial.min_seconds, cell.max_seconds / static_cast<double>(min_trials));
  trial.min_trials = trial.max_trials = 1;
  return trial;
}

trials_decision decide_trials(const sampling_limits& limits, std::size_t trials, double seconds,
                              double noise) noexcept {
  if (trials < std::max<std::size_t>(1, limits.min_trials)) return trials_decision::more;
  if (noise <= limits.max_noise) return trials_decision::settled;
  if (trials >= limits.max_trials) return trials_decision::trial_cap;
  if (seconds >= limits.max_seconds) return trials_decision::time_cap;
  return trials_decision::more;
}

cell_failure describe_failure(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const unsupported& e) {
    return {.reason = e.what(), .failed = false};
  } catch (const out_of_memory& e) {
    return {.reason = std::string("out of memory: ") + e.what(), .failed = true};
  } catch (const std::bad_alloc&) {
    return {.reason = "out of host memory", .failed = true};
  } catch (const std::exception& e) {
    return {.reason = e.what(), .failed = true};
  } catch (...) {
    return {.reason = "an unknown error", .failed = true};
  }
}

void run_trials(std::span<trial_cell* const> cells, trial_schedule schedule,
                const std::function<void(const std::string&)>& progress) {
  const auto one_trial = [&](trial_cell& cell) {
    if (progress) progress(cell.describe());
    try {
      cell.run_trial();
    } catch (const device_fault& fault) {
      cell.fail({.reason = fault.what(), .failed = true});
      const std::string why = "stopped: the GPU faulted in " + cell.describe() + " (" + fault.what() + ")";
      for (trial_cell* other : cells)
        if (other != &cell && other->wants_trial()) other->stop(why);
      throw;
    } catch (...) {
      cell.fail(describe_failure(std::current_exception()));
    }
  };
  if (schedule == trial_schedule::sequential) {
    for (trial_cell* cell : cells)
      while (cell->wants_trial()) one_trial(*cell);
    return;
  }
  for (std::size_t round = 0;; ++round) {
    bool any = false;
    for (const std::size_t i : round_order(cells.size(), round)) {
      if (!cells[i]->wants_trial()) continue;
      any = true;
      one_trial(*cells[i]);
    }
    if (!any) return;
  }
}

}  // namespace ferry::bench
