// The noise figures of `ferry bench` and its stopping criteria, on synthetic series whose answers
// are worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "ferry/bench/stats.hpp"
#include "ferry/bench/stopping.hpp"

namespace fb = ferry::bench;

namespace {

std::vector<double> one_to(int n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

// n values spread evenly over [center - half_width, center + half_width], in a scrambled order.
std::vector<double> spread(std::size_t n, double center, double half_width) {
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t k = (i * 7919) % n;
    v.push_back(center - half_width + 2 * half_width * static_cast<double>(k) / static_cast<double>(n - 1));
  }
  return v;
}

}  // namespace

TEST(MedianNoise, UnknownWithFewerThanTwoSamples) {
  EXPECT_EQ(fb::median_noise({}), 1.0);
  const std::vector<double> one{5.0};
  EXPECT_EQ(fb::median_noise(one), 1.0);
}

TEST(MedianNoise, ConstantSeriesIsQuiet) {
  const std::vector<double> constant(50, 42.0);
  EXPECT_EQ(fb::median_noise(constant), 0.0);
  const std::vector<double> zeros(50, 0.0);
  EXPECT_EQ(fb::median_noise(zeros), 0.0);
}

TEST(MedianNoise, OneToHundredByHand) {
  // n = 100: ranks 50 -+ 0.98 * 10 = [40.2, 59.8] -> sorted[40] = 41 and sorted[60] = 61; the
  // standard error is (61 - 41) / 3.92 and the median 50.5.
  EXPECT_NEAR(fb::median_noise(one_to(100)), (20.0 / 3.92) / 50.5, 1e-12);
}

TEST(MedianNoise, ShrinksAsTheSquareRootOfTheCount) {
  const double at_100 = fb::median_noise(spread(100, 100, 10));
  const double at_400 = fb::median_noise(spread(400, 100, 10));
  EXPECT_NEAR(at_400 / at_100, 0.5, 0.06);
}

TEST(MedianNoise, ATailOfOutliersBarelyMovesIt) {
  auto clean = spread(400, 100, 10);
  auto tailed = clean;
  for (std::size_t i = 0; i < tailed.size(); i += 100) tailed[i] = 10'000;  // four requests 100x slower
  EXPECT_LT(std::abs(fb::median_noise(tailed) - fb::median_noise(clean)), 0.25 * fb::median_noise(clean));
}

TEST(MedianNoise, ZeroMedianWithSpreadIsUnknown) {
  const std::vector<double> around_zero{-1, 0, 1};
  EXPECT_EQ(fb::median_noise(around_zero), 1.0);
}

TEST(RateNoise, EvenCompletionsAreQuiet) {
  std::vector<double> at;
  for (int i = 0; i < 1000; ++i) at.push_back((i + 0.5) / 1000.0 * 2.0);  // 2 s window
  EXPECT_NEAR(fb::rate_noise(at, 2.0), 0.0, 1e-12);
}

TEST(RateNoise, BurstsAreNoisy) {
  std::vector<double> at;
  for (int i = 0; i < 1000; ++i) at.push_back((i % 2 == 0 ? 0.1 : 1.1) + 1e-4 * i);  // two bursts
  EXPECT_GT(fb::rate_noise(at, 2.0), 0.2);
}

TEST(RateNoise, TooFewRequestsAreUnknown) {
  const std::vector<double> at{0.1, 0.2, 0.3};
  EXPECT_EQ(fb::rate_noise(at, 1.0), 1.0);
  EXPECT_EQ(fb::rate_noise(at, 0.0), 1.0);
}

namespace {
const fb::sampling_limits limits{.max_noise = 0.01, .min_samples = 40, .min_seconds = 0.1, .max_seconds = 4.0};
}

TEST(StopWhenQuiet, QuietSeriesStopsRightAfterTheMinimums) {
  const fb::stop_when_quiet rule(limits);
  const std::vector<double> quiet(40, 10.0);
  const std::span<const double> all(quiet);
  const std::span<const double> enough[] = {all};
  const std::span<const double> too_few[] = {all.first(39)};
  EXPECT_EQ(rule.decide(too_few, 1.0), fb::stop_decision::keep_going);
  EXPECT_EQ(rule.decide(enough, 0.05), fb::stop_decision::keep_going);  // too little time
  EXPECT_EQ(rule.decide(enough, 0.1), fb::stop_decision::settled);
}

TEST(StopWhenQuiet, NoisySeriesRunsToTheCap) {
  const fb::stop_when_quiet rule(limits);
  const auto noisy = one_to(100);  // noise ~10%
  const std::span<const double> series[] = {noisy};
  EXPECT_EQ(rule.decide(series, 1.0), fb::stop_decision::keep_going);
  EXPECT_EQ(rule.decide(series, 4.0), fb::stop_decision::time_cap);
}

TEST(StopWhenQuiet, EverySeriesMustBeQuiet) {
  const fb::stop_when_quiet rule(limits);
  const std::vector<double> quiet(100, 10.0);
  const auto noisy = one_to(100);
  const std::span<const double> both[] = {quiet, noisy};
  const std::span<const double> quiet_only[] = {quiet, quiet};
  EXPECT_EQ(rule.decide(both, 1.0), fb::stop_decision::keep_going);
  EXPECT_EQ(rule.decide(quiet_only, 1.0), fb::stop_decision::settled);
  // The minimum count applies to the shortest series.
  const std::span<const double> short_one[] = {std::span<const double>(quiet),
                                               std::span<const double>(quiet).first(10)};
  EXPECT_EQ(rule.decide(short_one, 1.0), fb::stop_decision::keep_going);
}

TEST(StopWhenQuiet, NoiseFallsUnderTheLimitOnceThereAreEnoughSamples) {
  const fb::stop_when_quiet rule(limits);
  // +-20% spread: the median's noise falls as 1/sqrt(n) and crosses 1% between 40 and 4000 samples.
  const auto all = spread(4000, 100, 20);
  std::size_t stopped_at = 0;
  for (std::size_t n = 40; n <= all.size(); n += 10) {
    const std::span<const double> series[] = {std::span<const double>(all).first(n)};
    if (rule.decide(series, 1.0) == fb::stop_decision::settled) {
      stopped_at = n;
      break;
    }
  }
  ASSERT_GT(stopped_at, 40u);
  EXPECT_LE(fb::median_noise(std::span<const double>(all).first(stopped_at)), 0.01);
  EXPECT_GT(fb::median_noise(std::span<const double>(all).first(stopped_at - 10)), 0.01);
}

TEST(StopAfterCount, EverySeriesReachesTheCount) {
  const fb::stop_after_count rule(10);
  const std::vector<double> ten(10, 1.0), nine(9, 1.0);
  const std::span<const double> done[] = {ten, ten};
  const std::span<const double> not_yet[] = {ten, nine};
  EXPECT_EQ(rule.decide(done, 0.0), fb::stop_decision::settled);
  EXPECT_EQ(rule.decide(not_yet, 100.0), fb::stop_decision::keep_going);
  EXPECT_NE(rule.describe().find("10"), std::string::npos);
}

TEST(StopAfterTime, TheWindowEndsTheCell) {
  const fb::stop_after_time rule(1.5);
  const std::vector<double> some(3, 1.0);
  const std::span<const double> series[] = {some};
  EXPECT_EQ(rule.decide(series, 1.4), fb::stop_decision::keep_going);
  EXPECT_EQ(rule.decide(series, 1.5), fb::stop_decision::settled);
}

TEST(StopWhenQuiet, DescribesItsLimits) {
  const std::string text = fb::stop_when_quiet(limits).describe();
  EXPECT_NE(text.find("1%"), std::string::npos) << text;
  EXPECT_NE(text.find("40"), std::string::npos) << text;
  EXPECT_NE(text.find("4 s"), std::string::npos) << text;
}

TEST(StopWhenRateQuiet, AtLeastTheWindowThenUntilTheRateIsQuiet) {
  const fb::stop_when_rate_quiet rule({.max_noise = 0.01, .min_samples = 0, .min_seconds = 1.0, .max_seconds = 4.0});
  EXPECT_TRUE(rule.reads_completion_times());
  std::vector<double> even;
  for (int i = 0; i < 2000; ++i) even.push_back((i + 0.5) / 1000.0);  // 1000 req/s for 2 s, evenly
  const std::span<const double> series[] = {even};
  EXPECT_EQ(rule.decide(series, 0.9), fb::stop_decision::keep_going);  // the window is not over
  EXPECT_EQ(rule.decide(series, 2.0), fb::stop_decision::settled);
  std::vector<double> bursts;
  for (int i = 0; i < 2000; ++i) bursts.push_back((i % 2 == 0 ? 0.1 : 1.1) + 1e-4 * i);
  const std::span<const double> bursty[] = {bursts};
  EXPECT_EQ(rule.decide(bursty, 2.0), fb::stop_decision::keep_going);
  EXPECT_EQ(rule.decide(bursty, 4.0), fb::stop_decision::time_cap);
}

TEST(StopWhenRateQuiet, AFixedWindowWhenTheCapIsTheWindow) {
  const fb::stop_when_rate_quiet rule({.max_noise = 0.01, .min_samples = 0, .min_seconds = 0.3, .max_seconds = 0.3});
  const std::vector<double> few{0.1, 0.2};
  const std::span<const double> series[] = {few};
  EXPECT_EQ(rule.decide(series, 0.3), fb::stop_decision::time_cap);
  EXPECT_EQ(rule.describe(), "a window of 0.3 s");
}
