// The profile's pick against the best strategy of a run: which cell groups count as good advice,
// the summary line, and how the report carries and renders the checks.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "bench/statistics/advice_check.hpp"
#include "ferry/bench/report.hpp"
#include "ferry/bench/stats.hpp"

namespace fb = ferry::bench;
using ferry::strategy_kind;

namespace {

fb::strategy_result cell(std::string strategy, double median_us, bool matches = true) {
  fb::strategy_result r;
  r.identity.strategy = ferry::parse_strategy(strategy);
  r.identity.engine = "touch";
  r.identity.input_bytes = 19'000'000;
  r.figures.latency_us.median = median_us;
  r.figures.throughput_per_s = 1e6 / median_us;
  r.verdict.output_checked = true;
  r.verdict.output_matches = matches;
  return r;
}

std::vector<const fb::strategy_result*> pointers(const std::vector<fb::strategy_result>& cells) {
  std::vector<const fb::strategy_result*> out;
  for (const auto& c : cells) out.push_back(&c);
  return out;
}

}  // namespace

TEST(AdviceCheck, APickAtTheBestHasNoShortfall) {
  const std::vector cells{cell("pinned", 400), cell("mapped", 380), cell("managed", 900)};
  const auto c = fb::check_advice(pointers(cells), strategy_kind::mapped, ferry::objective::latency);
  EXPECT_EQ(c.engine, "touch");
  EXPECT_EQ(c.input_bytes, 19'000'000U);
  EXPECT_EQ(c.best, "mapped");
  ASSERT_TRUE(c.shortfall.has_value());
  EXPECT_DOUBLE_EQ(*c.shortfall, 0.0);
  EXPECT_TRUE(c.within());
}

TEST(AdviceCheck, ShortfallIsRelativeToTheBestForEachObjective) {
  const std::vector cells{cell("pinned", 420), cell("mapped", 400)};
  const auto slower = fb::check_advice(pointers(cells), strategy_kind::pinned, ferry::objective::latency);
  ASSERT_TRUE(slower.shortfall.has_value());
  EXPECT_NEAR(*slower.shortfall, 0.05, 1e-12);  // 420 / 400 - 1
  EXPECT_TRUE(slower.within());
  EXPECT_FALSE(slower.within(0.04));

  const auto fewer = fb::check_advice(pointers(cells), strategy_kind::pinned, ferry::objective::throughput);
  EXPECT_EQ(fewer.best, "mapped");
  ASSERT_TRUE(fewer.shortfall.has_value());
  EXPECT_NEAR(*fewer.shortfall, (1e6 / 400) / (1e6 / 420) - 1, 1e-12);
}

TEST(AdviceCheck, TheFloorAndFailedCellsNeverCountAsTheBest) {
  std::vector cells{cell("device", 15), cell("mapped", 30, /*matches=*/false), cell("pinned", 40)};
  cells.push_back(cell("registered", 10));
  cells.back().verdict.refuse("out of memory");
  const auto c = fb::check_advice(pointers(cells), strategy_kind::pinned, ferry::objective::latency);
  EXPECT_EQ(c.best, "pinned");
  EXPECT_TRUE(c.within());
}

TEST(AdviceCheck, APickThatDidNotRunSaysWhyAndIsNotGood) {
  std::vector cells{cell("pinned", 40), cell("mapped", 30, /*matches=*/false)};
  cells.push_back(cell("registered", 10));
  cells.back().verdict.refuse("no memory");
  const auto missing = fb::check_advice(pointers(cells), strategy_kind::managed_advise, ferry::objective::latency);
  EXPECT_FALSE(missing.shortfall.has_value());
  EXPECT_FALSE(missing.within());
  EXPECT_NE(missing.note.find("not among"), std::string::npos);
  const auto wrong = fb::check_advice(pointers(cells), strategy_kind::mapped, ferry::objective::latency);
  EXPECT_FALSE(wrong.within());
  EXPECT_NE(wrong.note.find("did not match"), std::string::npos);
  const auto refused = fb::check_advice(pointers(cells), strategy_kind::registered, ferry::objective::latency);
  EXPECT_FALSE(refused.within());
  EXPECT_NE(refused.note.find("no memory"), std::string::npos);
}

TEST(AdviceCheck, SummaryCountsTheGoodPicks) {
  EXPECT_EQ(fb::summarize_advice({}), "");
  const std::vector good{cell("pinned", 100), cell("mapped", 104)};
  const std::vector bad{cell("pinned", 100), cell("mapped", 120)};
  const std::vector<fb::advice_check> checks{
      fb::check_advice(pointers(good), strategy_kind::mapped, ferry::objective::latency),
      fb::check_advice(pointers(bad), strategy_kind::mapped, ferry::objective::latency),
      fb::check_advice(pointers(good), strategy_kind::pinned, ferry::objective::latency)};
  EXPECT_EQ(fb::summarize_advice(checks),
            "the profile's pick was within 5% of the best measured, or the same within their noise, in 2 of 3 cells "
            "(67%)");
}

// Two strategies that read host memory in place over the same link, one of which ran in a slower
// minute: a pick 24% short of the best is right when the two figures' noise between trials could
// make that much of it, and wrong when their noise is small.
TEST(AdviceCheck, APickWithinTheNoiseBetweenTrialsOfTheBestIsRight) {
  std::vector cells{cell("mapped", 496), cell("registered-mapped", 400)};
  const auto tight = fb::check_advice(pointers(cells), strategy_kind::mapped, ferry::objective::latency);
  ASSERT_TRUE(tight.shortfall.has_value());
  EXPECT_NEAR(*tight.shortfall, 0.24, 1e-12);
  EXPECT_EQ(tight.noise, 0.0);  // no noise figures: judged against the 5% tolerance alone
  EXPECT_FALSE(tight.within());

  for (auto& c : cells) {
    c.figures.noise = 0.005;       // quiet within each trial
    c.figures.trial_noise = 0.06;  // but the trials drifted apart
    c.figures.trials.resize(4);
  }
  const auto drifting = fb::check_advice(pointers(cells), strategy_kind::mapped, ferry::objective::latency);
  // t at 98% for the Welch dof of two 4-trial noises (6) is 3.14; times 6% x sqrt 2 is 26.7%.
  EXPECT_NEAR(drifting.noise, fb::difference_threshold({0.06, 3}, {0.06, 3}), 1e-12);
  EXPECT_GT(drifting.noise, 0.24);
  EXPECT_TRUE(drifting.within());

  for (auto& c : cells) c.figures.trial_noise = 0.01;
  const auto quiet = fb::check_advice(pointers(cells), strategy_kind::mapped, ferry::objective::latency);
  EXPECT_LT(quiet.noise, 0.24);
  EXPECT_FALSE(quiet.within());
}

TEST(AdviceCheck, TheReportCarriesAndRendersTheChecks) {
  fb::bench_report report;
  report.objective = "latency";
  report.results = {cell("pinned", 400), cell("mapped", 460)};
  report.advice_checks.push_back(
      fb::check_advice({&report.results[0], &report.results[1]}, strategy_kind::mapped, ferry::objective::latency));
  fb::advice_check unrun;
  unrun.engine = "reduce";
  unrun.input_bytes = 600'000;
  unrun.picked = "managed-advise";
  unrun.note = "the pick was not among the strategies measured";
  report.advice_checks.push_back(unrun);

  const auto back = fb::report_from_json(fb::to_json(report));
  ASSERT_EQ(back.advice_checks.size(), 2U);
  EXPECT_EQ(back.advice_checks[0].picked, "mapped");
  EXPECT_EQ(back.advice_checks[0].best, "pinned");
  EXPECT_DOUBLE_EQ(back.advice_checks[0].picked_value, 460);
  EXPECT_DOUBLE_EQ(back.advice_checks[0].best_value, 400);
  ASSERT_TRUE(back.advice_checks[0].shortfall.has_value());
  EXPECT_NEAR(*back.advice_checks[0].shortfall, 0.15, 1e-12);
  EXPECT_FALSE(back.advice_checks[1].shortfall.has_value());
  EXPECT_EQ(back.advice_checks[1].note, unrun.note);

  const std::string table = fb::render_table(report);
  EXPECT_NE(
      table.find("advice: touch 19 MB: the profile picks mapped, 460.0 µs; best measured pinned, 400.0 µs: +15.0% ✗"),
      std::string::npos)
      << table;
  EXPECT_NE(table.find("within 5% of the best measured, or the same within their noise, in 0 of 2 cells"),
            std::string::npos)
      << table;
  const std::string markdown = fb::render_markdown(report);
  EXPECT_NE(markdown.find("## The profile's advice against this run"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("- reduce 600 KB: the profile picks managed-advise: the pick was not among"),
            std::string::npos)
      << markdown;
}

TEST(AdviceCheck, AReportWithoutChecksHasNoAdviceSection) {
  fb::bench_report report;
  report.results = {cell("pinned", 400)};
  EXPECT_FALSE(fb::to_json(report).contains("advice_checks"));
  EXPECT_EQ(fb::render_table(report).find("advice:"), std::string::npos);
  EXPECT_EQ(fb::render_markdown(report).find("advice against"), std::string::npos);
}
