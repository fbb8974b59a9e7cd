// Statistics and the stopping rule of `ferry bench`, on series whose answers are known by hand.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "ferry/bench/stats.hpp"

namespace fb = ferry::bench;

namespace {

constexpr double eps = 1e-9;

std::vector<double> one_to(int n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

// Linear interpolation by hand: position p * (n - 1) between the sorted values 1..n is
// 1 + p * (n - 1) itself, so every percentile of 1..n is 1 + p * (n - 1).
double percentile_of_one_to(int n, double p) { return 1.0 + p * (n - 1); }

}  // namespace

TEST(BenchStats, OneToHundred) {
  const auto s = fb::summarize(one_to(100));
  EXPECT_EQ(s.count, 100u);
  EXPECT_NEAR(s.median, 50.5, eps);
  EXPECT_NEAR(s.p90, 90.1, eps);     // 1 + 0.9 * 99
  EXPECT_NEAR(s.p99, 99.01, eps);    // 1 + 0.99 * 99
  EXPECT_NEAR(s.p999, 99.901, eps);  // 1 + 0.999 * 99
  EXPECT_NEAR(s.min, 1, eps);
  EXPECT_NEAR(s.max, 100, eps);
  EXPECT_NEAR(s.iqr, 49.5, eps);  // 75.25 - 25.75
  EXPECT_NEAR(s.mean, 50.5, eps);
  EXPECT_NEAR(s.p90, percentile_of_one_to(100, 0.90), eps);
}

TEST(BenchStats, OddCount) {
  const std::vector<double> v{5, 1, 3};  // sorted 1 3 5
  const auto s = fb::summarize(v);
  EXPECT_EQ(s.count, 3u);
  EXPECT_NEAR(s.median, 3, eps);
  EXPECT_NEAR(s.p90, 4.6, eps);  // position 1.8: 3 + 0.8 * (5 - 3)
  EXPECT_NEAR(s.iqr, 2, eps);    // p75 at 1.5 -> 4, p25 at 0.5 -> 2
  EXPECT_NEAR(s.mean, 3, eps);
}

TEST(BenchStats, EvenCount) {
  const std::vector<double> v{4, 1, 3, 2};  // sorted 1 2 3 4
  const auto s = fb::summarize(v);
  EXPECT_NEAR(s.median, 2.5, eps);
  EXPECT_NEAR(s.iqr, 1.5, eps);   // p75 at 2.25 -> 3.25, p25 at 0.75 -> 1.75
  EXPECT_NEAR(s.p99, 3.97, eps);  // position 2.97: 3 + 0.97
  EXPECT_NEAR(s.min, 1, eps);
  EXPECT_NEAR(s.max, 4, eps);
}

TEST(BenchStats, SingleSample) {
  const std::vector<double> v{7.5};
  const auto s = fb::summarize(v);
  EXPECT_EQ(s.count, 1u);
  for (double x : {s.median, s.p90, s.p99, s.min, s.max, s.mean}) EXPECT_DOUBLE_EQ(x, 7.5);
  EXPECT_DOUBLE_EQ(s.iqr, 0);
}

TEST(BenchStats, UnsortedInputIsNotModified) {
  std::vector<double> v{9, 2, 7, 4, 1, 8, 3, 6, 5, 10};
  const auto before = v;
  const auto s = fb::summarize(v);
  EXPECT_EQ(v, before);
  EXPECT_NEAR(s.median, 5.5, eps);
  EXPECT_NEAR(s.p90, percentile_of_one_to(10, 0.90), eps);
  EXPECT_EQ(fb::median_of(v), 5.5);
  EXPECT_EQ(v, before);
}

TEST(BenchStats, EmptyInputIsAllZeros) {
  const auto s = fb::summarize({});
  EXPECT_EQ(s.count, 0u);
  for (double x : {s.median, s.p90, s.p99, s.min, s.max, s.iqr, s.mean}) EXPECT_EQ(x, 0);
  EXPECT_EQ(fb::median_of({}), 0);
}

TEST(BenchStats, MedianOfAgreesWithSummarize) {
  for (int n = 1; n <= 12; ++n) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back((i * 7) % n + 0.25 * i);  // scrambled, distinct
    EXPECT_NEAR(fb::median_of(v), fb::summarize(v).median, eps) << "n=" << n;
  }
}

TEST(BenchStats, PercentileClampsFraction) {
  const std::vector<double> sorted{1, 2, 3};
  EXPECT_EQ(fb::percentile_of_sorted(sorted, -1), 1);
  EXPECT_EQ(fb::percentile_of_sorted(sorted, 2), 3);
}

TEST(BenchStats, RelativeIqr) {
  EXPECT_NEAR(fb::relative_iqr(fb::summarize(one_to(100))), 49.5 / 50.5, eps);
  EXPECT_EQ(fb::relative_iqr(fb::sample_stats{}), 0);  // zero median: quiet, not NaN
}

TEST(BenchStats, ThroughputAndBandwidth) {
  EXPECT_DOUBLE_EQ(fb::throughput_per_second(1000, 2.0), 500);
  EXPECT_EQ(fb::throughput_per_second(1000, 0), 0);
  // 1 MB (1e6 bytes) in 20 us is 5e10 B/s = 50 GB/s.
  EXPECT_NEAR(fb::gigabytes_per_second(1'000'000, 20), 50, eps);
  EXPECT_EQ(fb::gigabytes_per_second(1'000'000, 0), 0);
}

namespace {

fb::settling_rule test_rule() {
  fb::settling_rule rule;
  rule.min_iterations = 10;
  rule.max_iterations = 500;
  rule.min_seconds = 0.5;
  rule.max_seconds = 5;
  rule.tolerance = 0.01;
  return rule;
}

}  // namespace

TEST(SettlingRule, ConstantSeriesStopsRightAfterTheMinimums) {
  const auto rule = test_rule();
  const std::vector<double> constant(10, 42.0);
  const std::span<const double> all(constant);
  EXPECT_EQ(rule.decide(all.first(9), 1.0), fb::stop_decision::keep_going);  // too few samples
  EXPECT_EQ(rule.decide(all, 0.1), fb::stop_decision::keep_going);           // too little time
  EXPECT_EQ(rule.decide(all, 0.5), fb::stop_decision::settled);
  EXPECT_TRUE(rule.should_stop(all, 0.5));
}

TEST(SettlingRule, DriftingSeriesKeepsGoingUntilTheCap) {
  const auto rule = test_rule();
  std::vector<double> drifting;
  for (int i = 0; i < 500; ++i) drifting.push_back(100.0 + 5.0 * i);  // the median never settles
  const std::span<const double> all(drifting);
  EXPECT_FALSE(rule.median_settled(all.first(100)));
  EXPECT_EQ(rule.decide(all.first(100), 1.0), fb::stop_decision::keep_going);
  EXPECT_FALSE(rule.should_stop(all.first(499), 4.9));

  EXPECT_EQ(rule.decide(all, 1.0), fb::stop_decision::iteration_cap);
  EXPECT_EQ(rule.decide(all.first(100), 5.0), fb::stop_decision::time_cap);
}

TEST(SettlingRule, NoisyButStationarySeriesSettlesBeforeTheCap) {
  const auto rule = test_rule();
  std::vector<double> noisy;
  std::size_t stopped_at = 0;
  for (std::size_t i = 0; i < rule.max_iterations; ++i) {
    // +-10% around 100 in a scrambled but deterministic order.
    noisy.push_back(100.0 + 10.0 * (static_cast<double>((i * 7919) % 101) - 50.0) / 50.0);
    if (rule.should_stop(noisy, 1.0)) {
      stopped_at = noisy.size();
      break;
    }
  }
  ASSERT_GT(stopped_at, 0u);
  EXPECT_LT(stopped_at, rule.max_iterations);
  EXPECT_EQ(rule.decide(noisy, 1.0), fb::stop_decision::settled);
}

TEST(SettlingRule, SettledMedianWinsOverACapReachedAtTheSameTime) {
  const auto rule = test_rule();
  const std::vector<double> constant(rule.max_iterations, 3.0);
  EXPECT_EQ(rule.decide(constant, rule.max_seconds), fb::stop_decision::settled);
}

TEST(SettlingRule, CapBeforeTheMinimumsIsACap) {
  auto rule = test_rule();
  rule.min_seconds = 10;  // longer than max_seconds: only the cap can end the run
  const std::vector<double> constant(50, 1.0);
  EXPECT_EQ(rule.decide(constant, 5.0), fb::stop_decision::time_cap);
}

TEST(SettlingRule, MedianSettledNeedsTwoSamples) {
  const auto rule = test_rule();
  const std::vector<double> one{1.0};
  EXPECT_FALSE(rule.median_settled({}));
  EXPECT_FALSE(rule.median_settled(one));
  const std::vector<double> zeros(20, 0.0);
  EXPECT_TRUE(rule.median_settled(zeros));
}

TEST(BenchStats, PercentileRankSaysWhereOneRequestFalls) {
  const std::vector<double> timed{30, 10, 20, 40};  // any order
  EXPECT_EQ(fb::percentile_rank(timed, 5), 0);      // faster than every timed request
  EXPECT_EQ(fb::percentile_rank(timed, 20), 50);    // ties count as at or below
  EXPECT_EQ(fb::percentile_rank(timed, 25), 50);
  EXPECT_EQ(fb::percentile_rank(timed, 40), 100);
  EXPECT_EQ(fb::percentile_rank(timed, 400), 100);  // a cold start: slower than all of them
  EXPECT_EQ(fb::percentile_rank({}, 1), 0);
}
