#include "ferry/bench/stats.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "core/median.hpp"

namespace ferry::bench {

double percentile_of_sorted(std::span<const double> sorted, double fraction) noexcept {
  if (sorted.empty()) return 0;
  const double clamped = std::clamp(fraction, 0.0, 1.0);
  const double position = clamped * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const std::size_t upper = std::min(lower + 1, sorted.size() - 1);
  const double weight = position - static_cast<double>(lower);
  return sorted[lower] + weight * (sorted[upper] - sorted[lower]);
}

double median_of(std::span<const double> samples) { return core::median(samples); }

double percentile_rank(std::span<const double> samples, double value) noexcept {
  if (samples.empty()) return 0;
  const auto at_or_below = std::count_if(samples.begin(), samples.end(), [value](double s) { return s <= value; });
  return 100.0 * static_cast<double>(at_or_below) / static_cast<double>(samples.size());
}

sample_stats summarize(std::span<const double> samples) {
  sample_stats stats;
  if (samples.empty()) return stats;

  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());

  stats.count = sorted.size();
  stats.median = percentile_of_sorted(sorted, 0.50);
  stats.p90 = percentile_of_sorted(sorted, 0.90);
  stats.p99 = percentile_of_sorted(sorted, 0.99);
  stats.p999 = percentile_of_sorted(sorted, 0.999);
  stats.min = sorted.front();
  stats.max = sorted.back();
  stats.iqr = percentile_of_sorted(sorted, 0.75) - percentile_of_sorted(sorted, 0.25);
  stats.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  return stats;
}

double relative_iqr(const sample_stats& stats) noexcept { return stats.median == 0 ? 0 : stats.iqr / stats.median; }

double throughput_per_second(std::size_t requests, double seconds) noexcept {
  return seconds > 0 ? static_cast<double>(requests) / seconds : 0;
}

double gigabytes_per_second(std::size_t bytes, double microseconds) noexcept {
  // bytes / (us * 1e-6) / 1e9 == bytes / us / 1e3
  return microseconds > 0 ? static_cast<double>(bytes) / microseconds / 1e3 : 0;
}

double median_noise(std::span<const double> samples) {
  const std::size_t n = samples.size();
  if (n < 2) return 1.0;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const double median = percentile_of_sorted(sorted, 0.5);
  const double half_width_ranks = 0.98 * std::sqrt(static_cast<double>(n));  // 1.96 sqrt(n) / 2
  const double middle = 0.5 * static_cast<double>(n);
  const auto lower = static_cast<std::size_t>(std::max(0.0, std::floor(middle - half_width_ranks)));
  const auto upper = std::min(n - 1, static_cast<std::size_t>(std::ceil(middle + half_width_ranks)));
  const double standard_error = (sorted[upper] - sorted[lower]) / 3.92;
  if (median == 0) return standard_error == 0 ? 0.0 : 1.0;
  return standard_error / std::abs(median);
}

double rate_noise(std::span<const double> completion_seconds, double window_seconds, std::size_t slices) {
  if (slices < 2 || window_seconds <= 0 || completion_seconds.size() < 2 * slices) return 1.0;
  std::vector<double> counts(slices, 0.0);
  for (const double t : completion_seconds) {
    const auto slice = static_cast<std::size_t>(std::max(0.0, t) / window_seconds * static_cast<double>(slices));
    counts[std::min(slice, slices - 1)] += 1;
  }
  const double mean = std::accumulate(counts.begin(), counts.end(), 0.0) / static_cast<double>(slices);
  double squares = 0;
  for (const double c : counts) squares += (c - mean) * (c - mean);
  const double deviation = std::sqrt(squares / static_cast<double>(slices - 1));
  return deviation / std::sqrt(static_cast<double>(slices)) / mean;
}

double trial_noise(std::span<const double> figures) {
  const std::size_t k = figures.size();
  if (k < 2) return 0;
  const double mean = std::accumulate(figures.begin(), figures.end(), 0.0) / static_cast<double>(k);
  if (mean == 0) return 0;
  double squares = 0;
  for (const double f : figures) squares += (f - mean) * (f - mean);
  const double deviation = std::sqrt(squares / static_cast<double>(k - 1));
  return deviation / std::sqrt(static_cast<double>(k)) / std::abs(mean);
}

noise_estimate judged_noise(const result_figures& r, bool throughput) noexcept {
  const double within = throughput ? r.throughput_noise : r.noise;
  const double between = throughput ? r.throughput_trial_noise : r.trial_noise;
  if (between > within && r.trials.size() >= 2)
    return {.relative = between, .dof = static_cast<double>(r.trials.size() - 1)};
  return {.relative = within};
}

noise_estimate judged_gpu_noise(const result_figures& r) noexcept {
  if (r.gpu_trial_noise > r.gpu_noise && r.trials.size() >= 2)
    return {.relative = r.gpu_trial_noise, .dof = static_cast<double>(r.trials.size() - 1)};
  return {.relative = r.gpu_noise};
}

namespace {

// Student's t at one-sided 0.99 for 1..30 degrees of freedom, then 40, 60, 120 and infinity.
constexpr double t_small[] = {31.8205, 6.9646, 4.5407, 3.7469, 3.3649, 3.1427, 2.9980, 2.8965, 2.8214, 2.7638,
                              2.7181,  2.6810, 2.6503, 2.6245, 2.6025, 2.5835, 2.5669, 2.5524, 2.5395, 2.5280,
                              2.5176,  2.5083, 2.4999, 2.4922, 2.4851, 2.4786, 2.4727, 2.4671, 2.4620, 2.4573};
constexpr std::pair<double, double> t_large[] = {{30, 2.4573}, {40, 2.4233}, {60, 2.3901}, {120, 2.3578}};
constexpr double z_quantile = 2.3263;
static_assert(difference_confidence == 0.99, "the table above is Student's t at 0.99");

// Between two tabulated points, log t is close to linear in 1/dof (within 4% from dof 1 up).
double interpolate(double dof, double dof_a, double t_a, double dof_b, double t_b) {
  const double x = 1 / dof, xa = 1 / dof_a, xb = dof_b > 0 ? 1 / dof_b : 0;
  const double w = (x - xa) / (xb - xa);
  return std::exp(std::log(t_a) + w * (std::log(t_b) - std::log(t_a)));
}

}  // namespace

double t_quantile(double dof) noexcept {
  if (!(dof >= 1)) dof = 1;  // NaN too
  if (std::isinf(dof)) return z_quantile;
  if (dof <= 30) {
    const auto lower = static_cast<std::size_t>(std::floor(dof));
    if (static_cast<double>(lower) == dof) return t_small[lower - 1];
    return interpolate(dof, static_cast<double>(lower), t_small[lower - 1], static_cast<double>(lower + 1),
                       t_small[lower]);
  }
  for (std::size_t i = 1; i < std::size(t_large); ++i)
    if (dof <= t_large[i].first)
      return interpolate(dof, t_large[i - 1].first, t_large[i - 1].second, t_large[i].first, t_large[i].second);
  // Past 120: towards the normal quantile, at 1/dof = 0.
  const double x = 1 / dof, x120 = 1.0 / 120;
  return std::exp(std::log(z_quantile) + x / x120 * (std::log(t_large[3].second) - std::log(z_quantile)));
}

double difference_threshold(noise_estimate a, noise_estimate b) noexcept {
  const double a2 = a.relative * a.relative, b2 = b.relative * b.relative;
  if (a2 + b2 == 0) return 0;
  // Welch-Satterthwaite: the degrees of freedom of a sum of two estimated variances.
  const double spread = (std::isinf(a.dof) ? 0 : a2 * a2 / a.dof) + (std::isinf(b.dof) ? 0 : b2 * b2 / b.dof);
  const double dof = spread == 0 ? std::numeric_limits<double>::infinity() : (a2 + b2) * (a2 + b2) / spread;
  return t_quantile(dof) * std::sqrt(a2 + b2);
}

bool settling_rule::median_settled(std::span<const double> samples) const {
  if (samples.size() < 2) return false;
  // Hold back the newest fifth (at least one sample): if it no longer moves the median, more of
  // the same will not either.
  const std::size_t held_back = std::max<std::size_t>(1, samples.size() / 5);
  const double all = median_of(samples);
  const double older = median_of(samples.first(samples.size() - held_back));
  if (all == older) return true;  // also covers a series of zeros
  const double scale = std::max(std::abs(all), std::abs(older));
  return std::abs(all - older) < tolerance * scale;
}

stop_decision settling_rule::decide(std::span<const double> samples, double elapsed_seconds) const {
  const bool minimums_met = samples.size() >= min_iterations && elapsed_seconds >= min_seconds;
  // A settled median wins over a cap reached in the same iteration: the result is trustworthy.
  if (minimums_met && median_settled(samples)) return stop_decision::settled;
  if (samples.size() >= max_iterations) return stop_decision::iteration_cap;
  if (elapsed_seconds >= max_seconds) return stop_decision::time_cap;
  return stop_decision::keep_going;
}

bool settling_rule::should_stop(std::span<const double> samples, double elapsed_seconds) const {
  return decide(samples, elapsed_seconds) != stop_decision::keep_going;
}

}  // namespace ferry::bench
