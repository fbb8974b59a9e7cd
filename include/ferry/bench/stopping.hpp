// When a benchmark cell has sampled enough: stopping criteria as small classes of their own, as
// nvbench keeps them, so the loops that take samples do not decide it themselves.
//
// The default, stop_when_quiet, samples until the median of every series is known to within
// `max_noise` (median_noise: the relative standard error of the median), after at least
// `min_samples` and `min_seconds`, and gives up at `max_seconds`. A cell that gives up is not
// thrown away: its noise is reported and it is flagged noisy, so a reader can tell a difference
// between two cells from noise.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "ferry/bench/stats.hpp"

namespace ferry::bench {

// A cell's limits, over all its trials together (ferry/bench/trials.hpp says how a trial gets
// its share).
struct sampling_limits {
  double max_noise = 0.01;  // relative standard error of the median (0.01 = 1%)
  std::size_t min_samples = 40;
  double min_seconds = 0.1;
  double max_seconds = 4.0;  // the cell's measuring time, all trials together
  // Trials: at least min_trials, more while the judged noise (the larger of within and between
  // trials) is above max_noise and time is left, at most max_trials.
  std::size_t min_trials = 3;
  std::size_t max_trials = 6;
};

class stopping_criterion {
 public:
  virtual ~stopping_criterion() = default;
  // Decides after the samples of every series measured together (each oldest first), taken over
  // `elapsed_seconds`. A cell that alternates a strategy with its recipe stops only when both
  // are known well enough.
  [[nodiscard]] virtual stop_decision decide(std::span<const std::span<const double>> series,
                                             double elapsed_seconds) const = 0;
  // The rule in words for reports: "noise <= 1%, 40..inf samples, 0.1..4 s".
  [[nodiscard]] virtual std::string describe() const = 0;
  // What the series passed to decide() hold: each request's latency (the default), or the
  // seconds after the clock started at which each request completed (rates).
  [[nodiscard]] virtual bool reads_completion_times() const { return false; }
};

// Until every series' median noise is at most max_noise (minimums first; max_seconds caps).
class stop_when_quiet final : public stopping_criterion {
 public:
  explicit stop_when_quiet(sampling_limits limits) : limits_(limits) {}
  [[nodiscard]] stop_decision decide(std::span<const std::span<const double>> series,
                                     double elapsed_seconds) const override;
  [[nodiscard]] std::string describe() const override;

 private:
  sampling_limits limits_;
};

// A fixed number of samples in every series (--iterations).
class stop_after_count final : public stopping_criterion {
 public:
  explicit stop_after_count(std::size_t count) : count_(count) {}
  [[nodiscard]] stop_decision decide(std::span<const std::span<const double>> series,
                                     double elapsed_seconds) const override;
  [[nodiscard]] std::string describe() const override;

 private:
  std::size_t count_;
};

// Throughput: requests over a window of at least min_seconds, until the rate's noise (rate_noise
// of the completion times) is at most max_noise or max_seconds have passed. min_samples is not
// used: a window of time, not a count, is what a rate needs.
class stop_when_rate_quiet final : public stopping_criterion {
 public:
  explicit stop_when_rate_quiet(sampling_limits limits) : limits_(limits) {}
  [[nodiscard]] stop_decision decide(std::span<const std::span<const double>> completion_times,
                                     double elapsed_seconds) const override;
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] bool reads_completion_times() const override { return true; }

 private:
  sampling_limits limits_;
};

// A fixed window of time (requests over a window, whatever their latencies).
class stop_after_time final : public stopping_criterion {
 public:
  explicit stop_after_time(double seconds) : seconds_(seconds) {}
  [[nodiscard]] stop_decision decide(std::span<const std::span<const double>> series,
                                     double elapsed_seconds) const override;
  [[nodiscard]] std::string describe() const override;

 private:
  double seconds_;
};

}  // namespace ferry::bench
