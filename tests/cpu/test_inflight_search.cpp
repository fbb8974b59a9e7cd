// `--inflight auto` on a model of a pipeline whose throughput by slot count is known: the search
// must find the knee, stop soon after it, and say what it tried.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <stdexcept>

#include "ferry/bench/run.hpp"

namespace fb = ferry::bench;

namespace {

// A cell whose rate at each slot count comes from `rate`, with 0.5% noise.
fb::cell_function model(std::function<double(int)> rate, std::vector<int>* tried = nullptr,
                        std::size_t request_bytes = 1 << 20) {
  return [rate, tried, request_bytes](const fb::workload&, ferry::strategy_kind k, const fb::run_options& o) {
    fb::strategy_result r;
    r.strategy = std::string(ferry::to_string(k));
    r.inflight = o.session.inflight;
    r.input_bytes = request_bytes;
    if (o.inflight_auto) throw std::logic_error("a trial must run one count");
    if (!o.window_seconds) throw std::logic_error("a trial measures throughput over a window");
    r.throughput_per_s = rate(o.session.inflight);
    r.throughput_noise = 0.005;
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
  const auto choice = fb::choose_inflight(any, ferry::strategy_kind::pinned, options,
                                          model([](int d) { return 100.0 * std::min(d, 4); }, &tried));
  ASSERT_TRUE(choice.depth.has_value());
  EXPECT_EQ(*choice.depth, 4);
  EXPECT_EQ(tried, (std::vector<int>{1, 2, 3, 4, 6, 8}));
  EXPECT_NE(choice.explanation.find("inflight auto: 4 slots"), std::string::npos) << choice.explanation;
  EXPECT_NE(choice.explanation.find("400"), std::string::npos) << choice.explanation;
}

TEST(InflightSearch, PicksTheSmallestCountWithinNoiseOfTheBest) {
  const std::map<int, double> rates{{1, 100}, {2, 180}, {3, 199}, {4, 200}, {6, 200}, {8, 201}};
  const auto choice = fb::choose_inflight(any, ferry::strategy_kind::pinned, {},
                                          model([&](int d) { return rates.at(d); }));
  ASSERT_TRUE(choice.depth.has_value());
  EXPECT_EQ(*choice.depth, 3);  // 4 and up add less than their noise
}

TEST(InflightSearch, ARefusedStrategyHasNoDepth) {
  const auto refuse = [](const fb::workload&, ferry::strategy_kind, const fb::run_options&) {
    fb::strategy_result r;
    r.refused = "needs HMM";
    return r;
  };
  const auto choice = fb::choose_inflight(any, ferry::strategy_kind::system, {}, refuse);
  EXPECT_FALSE(choice.depth.has_value());
  EXPECT_NE(choice.explanation.find("needs HMM"), std::string::npos) << choice.explanation;
}

TEST(InflightSearch, LargeRequestsStopBeforeTheirSlotsOutgrowMemory) {
  std::vector<int> tried;
  // 2 GiB a request: 4 slots hold 8 GiB, the cap; 6 would not be tried.
  (void)fb::choose_inflight(any, ferry::strategy_kind::pinned, {},
                            model([](int d) { return 10.0 * d; }, &tried, std::size_t{2} << 30));
  EXPECT_EQ(tried, (std::vector<int>{1, 2, 3, 4}));
}
