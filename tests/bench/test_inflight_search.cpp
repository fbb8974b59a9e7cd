// `--inflight auto` on a model of a pipeline whose throughput by slot count is known: the search
// must find the knee, stop soon after it, and say what it tried.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <stdexcept>

#include "bench/measure/inflight_search.hpp"
#include "ferry/bench/run_options.hpp"

namespace fb = ferry::bench;

namespace {

// A cell whose rate at each slot count comes from `rate`, with 0.5% noise.
fb::cell_function model(std::function<double(int)> rate, std::vector<int>* tried = nullptr,
                        std::size_t request_bytes = 1 << 20) {
  return [rate, tried, request_bytes](const fb::workload&, ferry::strategy_kind k, const fb::run_options& o) {
    fb::strategy_result r;
    r.identity.strategy = k;
    r.identity.inflight = o.session.inflight;
    r.identity.input_bytes = request_bytes;
    if (o.inflight_auto) throw std::logic_error("a trial must run one count");
    if (!o.window_seconds) throw std::logic_error("a trial measures throughput over a window");
    if (o.limits.min_trials != 1 || o.limits.max_trials != 1) throw std::logic_error("a step is one trial");
    r.figures.throughput_per_s = rate(o.session.inflight);
    r.figures.throughput_noise = 0.005;
    if (tried) tried->push_back(o.session.inflight);
    return r;
  };
}

const fb::workload any{.label = "model", .make_engine = {}, .shapes = {}};

}  // namespace

TEST(InflightSearch, FindsTheKneeAndStopsTwoStepsPastIt) {
  std::vector<int> tried;
  fb::run_options options;
  options.inflight_auto = true;
  const auto choice = fb::search_inflight_depth(any, ferry::strategy_kind::pinned, options,
                                                model([](int d) { return 100.0 * std::min(d, 4); }, &tried));
  ASSERT_TRUE(choice.depth.has_value());
  EXPECT_EQ(*choice.depth, 4);
  EXPECT_EQ(tried, (std::vector<int>{1, 2, 3, 4, 6, 8}));
  EXPECT_NE(choice.explanation.find("inflight auto: 4 slots"), std::string::npos) << choice.explanation;
  EXPECT_NE(choice.explanation.find("400"), std::string::npos) << choice.explanation;
}

TEST(InflightSearch, PicksTheSmallestCountWithinNoiseOfTheBest) {
  const std::map<int, double> rates{{1, 100}, {2, 180}, {3, 199}, {4, 200}, {6, 200}, {8, 201}};
  const auto choice =
      fb::search_inflight_depth(any, ferry::strategy_kind::pinned, {}, model([&](int d) { return rates.at(d); }));
  ASSERT_TRUE(choice.depth.has_value());
  EXPECT_EQ(*choice.depth, 3);  // 4 and up add less than their noise
}

TEST(InflightSearch, ARefusedStrategyHasNoDepth) {
  const auto refuse = [](const fb::workload&, ferry::strategy_kind, const fb::run_options&) {
    fb::strategy_result r;
    r.verdict.refuse("needs HMM");
    return r;
  };
  const auto choice = fb::search_inflight_depth(any, ferry::strategy_kind::system, {}, refuse);
  EXPECT_FALSE(choice.depth.has_value());
  EXPECT_NE(choice.explanation.find("needs HMM"), std::string::npos) << choice.explanation;
}

TEST(InflightSearch, LargeRequestsStopBeforeTheirSlotsOutgrowMemory) {
  std::vector<int> tried;
  // 2 GiB a request: 4 slots hold 8 GiB, the cap; 6 would not be tried.
  (void)fb::search_inflight_depth(any, ferry::strategy_kind::pinned, {},
                                  model([](int d) { return 10.0 * d; }, &tried, std::size_t{2} << 30));
  EXPECT_EQ(tried, (std::vector<int>{1, 2, 3, 4}));
}

// A pipeline whose slots cost 1 GiB of device memory each (plus 0.5 GiB for the cell), on a card
// of 20 GiB with 10 GiB free: with the default 10% margin (2 GiB), the search may use 8 GiB, so it
// stops before 6 slots (6 x 1.5 GiB, the most a slot cost at one slot, is 9 GiB) although the rate
// still rises. Without a memory reading it would go on.
TEST(InflightSearch, StopsBeforeADepthThatWouldNotFitInFreeMemory) {
  constexpr std::size_t gib = std::size_t{1} << 30;
  const auto hungry = [](std::vector<int>* tried) {
    return [tried](const fb::workload& w, ferry::strategy_kind k, const fb::run_options& o) {
      auto r = model([](int d) { return 100.0 * d; }, tried)(w, k, o);
      r.figures.device_bytes_used = gib * static_cast<std::size_t>(o.session.inflight) + gib / 2;
      return r;
    };
  };
  std::vector<int> tried;
  std::size_t readings = 0;
  const fb::memory_reader card = [&readings] {
    ++readings;
    return fb::gpu_memory{.free_bytes = 10 * gib, .total_bytes = 20 * gib};
  };
  const auto choice = fb::search_inflight_depth(any, ferry::strategy_kind::pinned, {}, hungry(&tried), card);
  EXPECT_EQ(tried, (std::vector<int>{1, 2, 3, 4}));
  ASSERT_TRUE(choice.depth.has_value());
  EXPECT_EQ(*choice.depth, 4);
  EXPECT_GE(readings, 4U);  // before every step after the first
  EXPECT_NE(choice.explanation.find("not tried at 6"), std::string::npos) << choice.explanation;
  EXPECT_NE(choice.explanation.find("10% of the card"), std::string::npos) << choice.explanation;

  // A larger margin leaves less: 50% of 20 GiB is all of the 10 GiB free; nothing past one slot.
  tried.clear();
  fb::run_options wide;
  wide.memory_margin = 0.5;
  (void)fb::search_inflight_depth(any, ferry::strategy_kind::pinned, wide, hungry(&tried), card);
  EXPECT_EQ(tried, (std::vector<int>{1}));

  tried.clear();
  (void)fb::search_inflight_depth(any, ferry::strategy_kind::pinned, {}, hungry(&tried));
  EXPECT_GT(tried.size(), 4U);  // no reading, no memory limit
}

// A step that fails (out of memory inside the engine) ends the search at the depths before it.
TEST(InflightSearch, AFailedStepEndsTheSearchWithTheDepthsBefore) {
  const auto fails_at_4 = [](const fb::workload& w, ferry::strategy_kind k, const fb::run_options& o) {
    auto r = model([](int d) { return 100.0 * d; })(w, k, o);
    if (o.session.inflight >= 4) {
      r.verdict.fail("out of memory: CUDA out of memory");
    }
    return r;
  };
  const auto choice = fb::search_inflight_depth(any, ferry::strategy_kind::pinned, {}, fails_at_4);
  ASSERT_TRUE(choice.depth.has_value());
  EXPECT_EQ(*choice.depth, 3);
  EXPECT_NE(choice.explanation.find("stopped at 4: out of memory"), std::string::npos) << choice.explanation;
}

TEST(InflightSearch, RunnersCoverTheDeepestCountTried) {
  fb::run_options fixed;
  fixed.session.inflight = 4;
  EXPECT_EQ(fb::max_slots(fixed), 4);
  fb::run_options searched;
  searched.inflight_auto = true;
  EXPECT_EQ(fb::max_slots(searched), 64);
}
