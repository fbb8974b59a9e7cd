// Robust statistics of one benchmark series, the noise of its median, and the rule that says
// when a warm-up has settled.
//
// Benchmarks report medians and spreads rather than means because GPU timings have long right
// tails (a page fault, a context switch, a clock change); the median says what a request usually
// costs and p99/IQR say how much it wanders. The noise figure says how well the median itself is
// known, so two runs can be told apart from noise (ferry/bench/stopping.hpp, ferry/bench/compare.hpp).
#pragma once

#include <cstddef>
#include <limits>
#include <span>

#include "ferry/bench/result.hpp"

namespace ferry::bench {

// The value below which `fraction` (0..1) of the samples lie, interpolated linearly between the
// two nearest order statistics (the "type 7" definition of R and NumPy's default). `sorted` must
// be in ascending order and non-empty; `fraction` is clamped to [0, 1].
[[nodiscard]] double percentile_of_sorted(std::span<const double> sorted, double fraction) noexcept;

// The median of samples in any order (0 for none). Does not modify the input.
[[nodiscard]] double median_of(std::span<const double> samples);

// The share of `samples` (any order) at or below `value`, in percent (0 for no samples): where
// one request falls among the others. A first request after warm-up at p57 is a typical request,
// even when it is over 1.1x the median in a cell whose requests spread that wide.
[[nodiscard]] double percentile_rank(std::span<const double> samples, double value) noexcept;

// Summarizes a series in any order. Empty input gives count 0 and all zeros. The input is never
// modified (a sorted copy is taken).
[[nodiscard]] sample_stats summarize(std::span<const double> samples);

// IQR / median: the noise figure of a series, unitless (0.05 = the middle half spreads over 5%
// of the median). 0 when the median is 0, so a series of zeros reads as quiet, not as NaN.
[[nodiscard]] double relative_iqr(const sample_stats& stats) noexcept;

// Requests per second for `requests` completed in `seconds` (0 when no time has passed).
[[nodiscard]] double throughput_per_second(std::size_t requests, double seconds) noexcept;

// Effective bandwidth in GB/s (1e9 bytes per second, as link speeds are quoted) of moving `bytes`
// in `microseconds`; 0 when nothing was moved or no time was measured.
[[nodiscard]] double gigabytes_per_second(std::size_t bytes, double microseconds) noexcept;

// The noise of a median: its standard error relative to it, estimated without assuming a
// distribution, from the ~95% confidence interval of the median given by order statistics
// (ranks n/2 -+ 0.98 sqrt(n)); half its width over 1.96 is the standard error. 0.01 reads "the
// median is known to about +-1%". A long right tail (faults, context switches) does not inflate
// it the way it inflates a standard deviation. Fewer than two samples give 1 (100%, unknown), so
// a loop never stops on too little data; a zero median gives 0 when the interval is empty too.
[[nodiscard]] double median_noise(std::span<const double> samples);

// The noise of a rate: the requests completed at `completion_seconds` (any order, seconds since
// the window opened) over a window of `window_seconds`, split into `slices` equal slices; the
// standard error of the mean slice rate relative to that mean. 1 (unknown) with fewer than two
// slices' worth of requests.
[[nodiscard]] double rate_noise(std::span<const double> completion_seconds, double window_seconds,
                                std::size_t slices = 10);

// The noise between trials (ferry/bench/trials.hpp): the standard error of the mean of
// `figures` (one per trial: its median latency, or its rate) relative to that mean,
// s / sqrt(k) / mean. 0 with fewer than two figures (no spread known) or a mean of 0.
[[nodiscard]] double trial_noise(std::span<const double> figures);

// A figure's noise and how well that noise is known: the degrees of freedom of its estimate.
// Between trials, k trials give k - 1; within a trial, hundreds of samples are as good as exact
// (infinite).
struct noise_estimate {
  double relative = 0;
  double dof = std::numeric_limits<double>::infinity();
};

// The noise a cell is judged on: the larger of its noise within trials and between trials, for
// its latency or (`throughput`) its rate. Stopping, the noisy flag, compare and the advice check
// all use it: a run whose trials drifted apart is known no better than that drift, however many
// samples each trial took. Reports without a noise figure give relative 0.
[[nodiscard]] noise_estimate judged_noise(const result_figures& r, bool throughput) noexcept;

// The same for the cell's GPU time per request (gpu_us): the larger of gpu_noise and
// gpu_trial_noise. Reports without the GPU figure give relative 0.
[[nodiscard]] noise_estimate judged_gpu_noise(const result_figures& r) noexcept;

// Student's t at `probability` = difference_confidence (one-sided) for `dof` degrees of
// freedom, fractional ones interpolated; infinite dof gives the normal quantile. dof below 1 is
// taken as 1.
[[nodiscard]] double t_quantile(double dof) noexcept;

// One-sided probability of the test two figures are put to: 0.99, a two-sided test at 2%. Not 5%:
// a between-trial noise from three to six trials is itself uncertain (t covers that), and what
// no trial of one run can see of another (a process's start, the state of its host that lasts
// the whole run) is not in either noise; on a model of drifting trials with such a run-level
// offset of half the within-trial noise, 2.5% called 7% of unchanged cells different, 1% called 3%.
inline constexpr double difference_confidence = 0.99;

// The relative change beyond which two figures differ: t at the Welch-Satterthwaite degrees of
// freedom of the two noises, times their combined noise (hypot). With both noises measured within
// trials this is 2.33 times the combined noise.
[[nodiscard]] double difference_threshold(noise_estimate a, noise_estimate b) noexcept;

// Why a sampling loop stopped, or that it should go on.
enum class stop_decision {
  keep_going,     // the minimums are not met, or the median is still moving
  settled,        // the minimums are met and the median has settled: a trustworthy result
  iteration_cap,  // max_iterations reached before the median settled: report it as noisy
  time_cap,       // max_seconds reached before the median settled: report it as noisy
};

// Whether a warm-up has reached its steady state: run until the median stops moving.
//
// The median counts as settled when the median of all samples and the median of the samples
// without the newest 20% differ by less than `tolerance` (relative): adding the last fifth of the
// run no longer moved it. Both minimums must be met first, so a lucky quiet start cannot end a
// run early. Measurement stops on noise instead (ferry/bench/stopping.hpp); this rule only says when a
// level has stopped drifting.
struct settling_rule {
  std::size_t min_iterations = 10;
  std::size_t max_iterations = 100'000;
  double min_seconds = 0.5;
  double max_seconds = 10.0;
  double tolerance = 0.01;

  // Decides after `samples` (oldest first) taken over `elapsed_seconds`. Cost is linear in the
  // number of samples (two nth_element passes over a copy), so a loop over fast requests should
  // ask every few percent of samples rather than after each one.
  [[nodiscard]] stop_decision decide(std::span<const double> samples, double elapsed_seconds) const;

  // decide() != keep_going.
  [[nodiscard]] bool should_stop(std::span<const double> samples, double elapsed_seconds) const;

  // Whether the newest fifth of `samples` moved the median by less than `tolerance`; needs at
  // least two samples. Ignores the minimums and caps.
  [[nodiscard]] bool median_settled(std::span<const double> samples) const;
};

}  // namespace ferry::bench
