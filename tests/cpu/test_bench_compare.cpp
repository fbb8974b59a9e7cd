// `ferry bench compare`: which cells of two reports differ beyond their noise, on synthetic
// reports whose answers are worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "ferry/bench/compare.hpp"

namespace fb = ferry::bench;

namespace {

fb::strategy_result cell(std::string strategy, double median_us, double noise, double req_per_s = 0,
                         double throughput_noise = 0) {
  fb::strategy_result r;
  r.strategy = std::move(strategy);
  r.engine = "reduce";
  r.input_bytes = 19u << 20;
  r.iterations = 400;
  r.latency_us.count = 400;
  r.latency_us.median = median_us;
  r.noise = noise;
  r.throughput_per_s = req_per_s;
  r.throughput_noise = throughput_noise;
  return r;
}

const fb::cell_comparison& find(const fb::report_comparison& c, const std::string& strategy) {
  for (const auto& cell : c.cells)
    if (cell.label.find(" / " + strategy) != std::string::npos) return cell;
  throw std::runtime_error("no cell " + strategy);
}

}  // namespace

TEST(BenchCompare, DifferencesBeyondTwiceTheCombinedNoiseCount) {
  fb::bench_report a, b;
  a.objective = b.objective = "latency";
  // 1% noise on each side: the threshold is 2 * sqrt(2) % = 2.83%.
  a.results = {cell("pinned", 400, 0.01), cell("mapped", 400, 0.01), cell("managed", 400, 0.01)};
  b.results = {cell("pinned", 410, 0.01), cell("mapped", 420, 0.01), cell("managed", 380, 0.01)};
  const auto c = fb::compare_reports(a, b);
  ASSERT_EQ(c.cells.size(), 3u);
  EXPECT_EQ(find(c, "pinned").verdict, fb::cell_change::same);  // +2.5%: within noise
  EXPECT_EQ(find(c, "mapped").verdict, fb::cell_change::worse);  // +5%: B slower
  EXPECT_EQ(find(c, "managed").verdict, fb::cell_change::better);  // -5%: B faster
  EXPECT_NEAR(find(c, "pinned").threshold, 2 * std::sqrt(2.0) * 0.01, 1e-12);
  EXPECT_NEAR(find(c, "mapped").change, 0.05, 1e-12);
  EXPECT_EQ(c.differing, 2u);
  EXPECT_EQ(c.metric, "median µs");
}

TEST(BenchCompare, ThroughputCellsCompareTheRateAndHigherIsBetter) {
  fb::bench_report a, b;
  a.objective = b.objective = "throughput";
  a.results = {cell("pinned", 1, 0.5, 1000, 0.005)};
  b.results = {cell("pinned", 9, 0.5, 1100, 0.005)};  // latencies differ wildly: not what is compared
  const auto c = fb::compare_reports(a, b);
  EXPECT_EQ(c.metric, "req/s");
  EXPECT_EQ(c.cells.at(0).verdict, fb::cell_change::better);
  EXPECT_NEAR(c.cells.at(0).change, 0.1, 1e-12);
}

TEST(BenchCompare, UnmatchedAndRefusedCellsAreSaidSo) {
  fb::bench_report a, b;
  auto refused = cell("system", 0, 0);
  refused.refused = "needs HMM";
  auto other_settings = cell("pinned", 400, 0.01);
  other_settings.inflight = 4;  // not the same cell as inflight 1
  a.results = {cell("pinned", 400, 0.01), refused};
  b.results = {other_settings, refused};
  const auto c = fb::compare_reports(a, b);
  ASSERT_EQ(c.cells.size(), 3u);
  EXPECT_EQ(c.cells[0].verdict, fb::cell_change::only_in_a);
  EXPECT_EQ(c.cells[1].verdict, fb::cell_change::not_measured);
  EXPECT_EQ(c.cells[2].verdict, fb::cell_change::only_in_b);
  EXPECT_EQ(c.differing, 0u);
}

TEST(BenchCompare, ReportsWithoutNoiseFiguresGetThemFromTheirSpread) {
  fb::bench_report a, b;
  auto old = cell("pinned", 400, 0);  // written before noise was recorded
  old.relative_iqr = 0.10;
  a.results = {old};
  b.results = {cell("pinned", 400, 0.01)};
  const auto c = fb::compare_reports(a, b);
  const auto& only = c.cells.at(0);
  EXPECT_TRUE(only.noise_estimated);
  EXPECT_NEAR(only.noise_a, 0.93 * 0.10 / std::sqrt(400.0), 1e-12);
  const std::string text = fb::render_comparison(c, "old.json", "new.json");
  EXPECT_NE(text.find("estimated from the spread"), std::string::npos) << text;
}

TEST(BenchCompare, ADifferenceMeasuredAtAnotherHostSpeedSaysSo) {
  fb::bench_report a, b;
  auto slow = cell("pageable", 3200, 0.01);
  slow.host_probe_us = 28;
  slow.cuda_probe_us = 30;
  auto fast = cell("pageable", 2400, 0.01);
  fast.host_probe_us = 20;
  fast.cuda_probe_us = 10;
  a.results = {slow};
  b.results = {fast};
  const auto c = fb::compare_reports(a, b);
  EXPECT_NEAR(c.cells.at(0).host_ratio, 20.0 / 28.0, 1e-12);
  const std::string text = fb::render_comparison(c, "A.json", "B.json");
  EXPECT_NE(text.find("B better (host CPU 0.71x as slow in B, CUDA calls 0.33x as slow in B)"), std::string::npos)
      << text;
}

TEST(BenchCompare, RenderingNamesEveryCellAndSumsUp) {
  fb::bench_report a, b;
  a.results = {cell("pinned", 400, 0.01), cell("mapped", 400, 0.01)};
  b.results = {cell("pinned", 400, 0.01), cell("mapped", 500, 0.01)};
  const std::string text = fb::render_comparison(fb::compare_reports(a, b), "A.json", "B.json");
  EXPECT_NE(text.find("reduce / 19 MB / pinned"), std::string::npos) << text;
  EXPECT_NE(text.find("same within noise"), std::string::npos) << text;
  EXPECT_NE(text.find("B worse"), std::string::npos) << text;
  EXPECT_NE(text.find("+25.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("1 of 2 cells differ"), std::string::npos) << text;
}
