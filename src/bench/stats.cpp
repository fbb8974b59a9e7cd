#include "ferry/bench/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

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

double median_of(std::span<const double> samples) {
  if (samples.empty()) return 0;
  // nth_element on a copy instead of a full sort: the stopping rule calls this every iteration.
  std::vector<double> copy(samples.begin(), samples.end());
  const std::size_t mid = copy.size() / 2;
  std::nth_element(copy.begin(), copy.begin() + static_cast<std::ptrdiff_t>(mid), copy.end());
  const double upper = copy[mid];
  if (copy.size() % 2 == 1) return upper;
  // Even count: everything left of mid is <= copy[mid]; the largest of those is the other middle.
  const double lower = *std::max_element(copy.begin(), copy.begin() + static_cast<std::ptrdiff_t>(mid));
  return lower + 0.5 * (upper - lower);
}

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
  stats.min = sorted.front();
  stats.max = sorted.back();
  stats.iqr = percentile_of_sorted(sorted, 0.75) - percentile_of_sorted(sorted, 0.25);
  stats.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  return stats;
}

double relative_iqr(const sample_stats& stats) noexcept {
  return stats.median == 0 ? 0 : stats.iqr / stats.median;
}

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

bool settling_rule::hit_cap(std::span<const double> samples, double elapsed_seconds) const {
  const stop_decision d = decide(samples, elapsed_seconds);
  return d == stop_decision::iteration_cap || d == stop_decision::time_cap;
}

}  // namespace ferry::bench
