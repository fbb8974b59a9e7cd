#include "ferry/bench/stopping.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace ferry::bench {

stop_decision stop_when_quiet::decide(std::span<const std::span<const double>> series, double elapsed_seconds) const {
  std::size_t fewest = series.empty() ? 0 : series.front().size();
  for (const auto& s : series) fewest = std::min(fewest, s.size());
  const bool minimums_met = fewest >= limits_.min_samples && elapsed_seconds >= limits_.min_seconds;
  const bool quiet = std::all_of(series.begin(), series.end(),
                                 [this](std::span<const double> s) { return median_noise(s) <= limits_.max_noise; });
  // Quiet wins over a cap reached in the same step: that result is trustworthy.
  if (minimums_met && quiet) return stop_decision::settled;
  if (elapsed_seconds >= limits_.max_seconds) return stop_decision::time_cap;
  return stop_decision::keep_going;
}

std::string stop_when_quiet::describe() const {
  return fmt::format("until the median's noise is at most {:g}% (at least {} samples and {:g} s, at most {:g} s)",
                     100 * limits_.max_noise, limits_.min_samples, limits_.min_seconds, limits_.max_seconds);
}

stop_decision stop_when_rate_quiet::decide(std::span<const std::span<const double>> completion_times,
                                           double elapsed_seconds) const {
  if (elapsed_seconds < limits_.min_seconds) return stop_decision::keep_going;
  const bool quiet = std::all_of(completion_times.begin(), completion_times.end(), [&](std::span<const double> s) {
    return rate_noise(s, elapsed_seconds) <= limits_.max_noise;
  });
  if (quiet) return stop_decision::settled;
  return elapsed_seconds >= limits_.max_seconds ? stop_decision::time_cap : stop_decision::keep_going;
}

std::string stop_when_rate_quiet::describe() const {
  if (limits_.max_seconds <= limits_.min_seconds) return fmt::format("a window of {:g} s", limits_.min_seconds);
  return fmt::format("until the rate's noise is at most {:g}% (a window of at least {:g} s, at most {:g} s)",
                     100 * limits_.max_noise, limits_.min_seconds, limits_.max_seconds);
}

stop_decision stop_after_count::decide(std::span<const std::span<const double>> series, double) const {
  const bool done = !series.empty() && std::all_of(series.begin(), series.end(),
                                                   [this](std::span<const double> s) { return s.size() >= count_; });
  return done ? stop_decision::settled : stop_decision::keep_going;
}

std::string stop_after_count::describe() const { return fmt::format("{} requests", count_); }

stop_decision stop_after_time::decide(std::span<const std::span<const double>>, double elapsed_seconds) const {
  return elapsed_seconds >= seconds_ ? stop_decision::settled : stop_decision::keep_going;
}

std::string stop_after_time::describe() const { return fmt::format("a window of {:g} s", seconds_); }

}  // namespace ferry::bench
