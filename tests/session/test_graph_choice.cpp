// graph_mode::automatic's decision from the rounds it timed: the medians per request, the margin
// graphs must beat, and the sentence the platform and reports show. The trial itself runs on the
// GPU (tests/session/gpu/test_session_graph_choice.cpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ferry/core/error.hpp"
#include "ferry/session/graph_choice.hpp"

namespace {

using ferry::graph_measurement;

TEST(GraphChoice, MediansOfTheRoundsPerRequestInFlight) {
  // A slow outlier moves neither median; an even count takes the middle pair's mean.
  const std::vector<double> without = {400, 420, 9000, 410, 430};
  const std::vector<double> with = {200, 220, 210, 5000};
  const graph_measurement m = ferry::summarise_graph_trial(without, with, 2);
  EXPECT_DOUBLE_EQ(m.without_us, 420.0 / 2);
  EXPECT_DOUBLE_EQ(m.with_us, 215.0 / 2);
  EXPECT_EQ(m.rounds, 4);
  EXPECT_EQ(m.slots, 2);
}

TEST(GraphChoice, GraphsAreKeptOnlyWhenFasterByTheMargin) {
  const auto measured = [](double without_us, double with_us) {
    return graph_measurement{.without_us = without_us, .with_us = with_us, .rounds = 15, .slots = 4};
  };
  EXPECT_TRUE(ferry::graphs_pay(measured(1000, 500)));
  EXPECT_TRUE(ferry::graphs_pay(measured(1000, 1000 * (1 - ferry::graphs_min_saving))));
  EXPECT_FALSE(ferry::graphs_pay(measured(1000, 990)));  // 1% is within the rounds' noise
  EXPECT_FALSE(ferry::graphs_pay(measured(1000, 1000)));
  EXPECT_FALSE(ferry::graphs_pay(measured(1000, 1300)));  // graphs slower: never kept
}

TEST(GraphChoice, TheSentenceHoldsBothFiguresAndTheOutcome) {
  const std::string kept =
      ferry::describe(graph_measurement{.without_us = 1650, .with_us = 812, .rounds = 15, .slots = 4});
  EXPECT_NE(kept.find("812 us per request with CUDA graphs, 1650 us without"), std::string::npos) << kept;
  EXPECT_NE(kept.find("median of 15 rounds of 4 request(s) in flight"), std::string::npos) << kept;
  EXPECT_NE(kept.find("kept"), std::string::npos) << kept;
  const std::string dropped =
      ferry::describe(graph_measurement{.without_us = 100, .with_us = 99, .rounds = 15, .slots = 1});
  EXPECT_NE(dropped.find("not faster by 2%, not used"), std::string::npos) << dropped;
}

TEST(GraphChoice, ATrialWithoutRoundsOrRequestsIsRefused) {
  const std::vector<double> some = {1, 2}, none;
  EXPECT_THROW((void)ferry::summarise_graph_trial(none, some, 1), ferry::invalid_argument);
  EXPECT_THROW((void)ferry::summarise_graph_trial(some, none, 1), ferry::invalid_argument);
  EXPECT_THROW((void)ferry::summarise_graph_trial(some, some, 0), ferry::invalid_argument);
}

}  // namespace
