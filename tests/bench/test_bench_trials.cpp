// Trials: how the cells of a run take turns (interleaved rounds or one cell after another), when a
// cell wants another trial, what a trial that throws becomes, and the two noise figures, on fake
// cells and synthetic samples.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/measure/cell_result.hpp"
#include "bench/measure/cell_runner.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/bench/stats.hpp"
#include "ferry/bench/trials.hpp"
#include "ferry/core/error.hpp"

namespace fb = ferry::bench;

namespace {

// A cell that wants `wanted` trials, logs each one, and throws `error` in trial `throw_at` (1-based).
class fake_cell final : public fb::trial_cell {
 public:
  fake_cell(std::string name, std::size_t wanted, std::vector<std::string>& log, std::size_t throw_at = 0,
            std::function<void()> error = {})
      : name_(std::move(name)), wanted_(wanted), log_(log), throw_at_(throw_at), error_(std::move(error)) {}
  [[nodiscard]] bool wants_trial() const override { return !failure && !stopped && trials < wanted_; }
  void run_trial() override {
    ++trials;
    log_.push_back(name_);
    if (trials == throw_at_) error_();
  }
  void fail(fb::cell_failure why) override { failure = std::move(why); }
  void stop(std::string why) override { stopped = std::move(why); }
  [[nodiscard]] std::string describe() const override { return name_; }

  std::size_t trials = 0;
  std::optional<fb::cell_failure> failure;
  std::optional<std::string> stopped;

 private:
  std::string name_;
  std::size_t wanted_;
  std::vector<std::string>& log_;
  std::size_t throw_at_;
  std::function<void()> error_;
};

std::vector<fb::trial_cell*> pointers(std::vector<fake_cell>& cells) {
  std::vector<fb::trial_cell*> out;
  for (auto& c : cells) out.push_back(&c);
  return out;
}

}  // namespace

TEST(TrialSchedule, RoundsRotateAndReverse) {
  EXPECT_EQ(fb::round_order(4, 0), (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(fb::round_order(4, 1), (std::vector<std::size_t>{0, 3, 2, 1}));
  EXPECT_EQ(fb::round_order(4, 2), (std::vector<std::size_t>{2, 3, 0, 1}));
  EXPECT_TRUE(fb::round_order(0, 5).empty());
  for (std::size_t round = 0; round < 12; ++round) {
    auto order = fb::round_order(7, round);
    std::sort(order.begin(), order.end());
    EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6})) << "round " << round;  // each cell once
  }
  // Over six rounds a cell runs at several points of a round and after several neighbours.
  std::set<std::size_t> positions, before;
  for (std::size_t round = 0; round < 6; ++round) {
    const auto order = fb::round_order(7, round);
    const auto at = static_cast<std::size_t>(std::find(order.begin(), order.end(), 3) - order.begin());
    positions.insert(at);
    if (at > 0) before.insert(order[at - 1]);
  }
  EXPECT_GE(positions.size(), 4U);
  EXPECT_GE(before.size(), 2U);
}

TEST(TrialSchedule, InterleavedSpreadsEachCellsTrialsOverTheRun) {
  std::vector<std::string> log;
  std::vector<fake_cell> cells;
  cells.emplace_back("a", 3, log);
  cells.emplace_back("b", 3, log);
  cells.emplace_back("c", 5, log);
  std::vector<std::string> progress;
  fb::run_trials(pointers(cells), fb::trial_schedule::interleaved,
                 [&progress](const std::string& line) { progress.push_back(line); });
  ASSERT_EQ(log.size(), 11U);
  EXPECT_EQ(progress, log);
  // Three rounds of all three cells, then the cell that wants more alone.
  for (std::size_t round = 0; round < 3; ++round) {
    std::vector<std::string> seen(log.begin() + static_cast<std::ptrdiff_t>(3 * round),
                                  log.begin() + static_cast<std::ptrdiff_t>(3 * round + 3));
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c"})) << "round " << round;
  }
  EXPECT_EQ(std::vector<std::string>(log.begin() + 9, log.end()), (std::vector<std::string>{"c", "c"}));
  // The order changes from round to round.
  EXPECT_NE(std::vector<std::string>(log.begin(), log.begin() + 3),
            std::vector<std::string>(log.begin() + 3, log.begin() + 6));
}

TEST(TrialSchedule, SequentialRunsEachCellsTrialsBackToBack) {
  std::vector<std::string> log;
  std::vector<fake_cell> cells;
  cells.emplace_back("a", 2, log);
  cells.emplace_back("b", 3, log);
  fb::run_trials(pointers(cells), fb::trial_schedule::sequential);
  EXPECT_EQ(log, (std::vector<std::string>{"a", "a", "b", "b", "b"}));
}

// The boundary around every trial: an engine's error, a simulated out-of-memory and a refusal each
// end their own cell with the reason, and every other cell runs all its trials.
TEST(TrialSchedule, AThrowingTrialFailsItsCellAndTheRunGoesOn) {
  std::vector<std::string> log;
  std::vector<fake_cell> cells;
  cells.emplace_back("ok", 3, log);
  cells.emplace_back("engine", 3, log, 2, [] { throw ferry::error("AOTInductor run failed: boom"); });
  cells.emplace_back("oom", 3, log, 1, [] {
    ferry::detail::throw_cuda_error(cudaErrorMemoryAllocation, "cudaMalloc(&p, bytes)", "slot.cpp", 12);
  });
  cells.emplace_back("refused", 3, log, 1, [] { throw ferry::unsupported("needs HMM"); });
  cells.emplace_back("odd", 3, log, 3, [] { throw 42; });
  for (const auto schedule : {fb::trial_schedule::interleaved, fb::trial_schedule::sequential}) {
    SCOPED_TRACE(std::string(fb::to_string(schedule)));
    for (auto& c : cells) {
      c.trials = 0;
      c.failure.reset();
    }
    log.clear();
    fb::run_trials(pointers(cells), schedule);
    EXPECT_EQ(cells[0].trials, 3U);
    EXPECT_FALSE(cells[0].failure);
    ASSERT_TRUE(cells[1].failure);
    EXPECT_EQ(cells[1].trials, 2U);
    EXPECT_EQ(cells[1].failure->reason, "AOTInductor run failed: boom");
    EXPECT_TRUE(cells[1].failure->failed);
    ASSERT_TRUE(cells[2].failure);
    EXPECT_EQ(cells[2].trials, 1U);
    EXPECT_EQ(cells[2].failure->reason.rfind("out of memory: ", 0), 0U) << cells[2].failure->reason;
    EXPECT_NE(cells[2].failure->reason.find("cudaMalloc"), std::string::npos) << cells[2].failure->reason;
    EXPECT_TRUE(cells[2].failure->failed);
    ASSERT_TRUE(cells[3].failure);
    EXPECT_EQ(cells[3].failure->reason, "needs HMM");
    EXPECT_FALSE(cells[3].failure->failed);  // the platform's refusal, not an error of the run
    ASSERT_TRUE(cells[4].failure);
    EXPECT_EQ(cells[4].failure->reason, "an unknown error");
  }
  // Interleaved (the last loop was sequential, so run it again): the healthy cell's last trial
  // comes after the others failed.
  for (auto& c : cells) {
    c.trials = 0;
    c.failure.reset();
  }
  log.clear();
  fb::run_trials(pointers(cells), fb::trial_schedule::interleaved);
  EXPECT_EQ(log.back(), "ok");
}

// The public entry point on a cell that cannot run: it comes back failed with the reason instead
// of throwing, whatever went wrong inside.
TEST(TrialSchedule, ACellThatCannotRunComesBackFailed) {
  const fb::workload nothing{.label = "touch", .make_engine = {}, .shapes = {}};
  fb::run_options options;
  options.devices = {};
  const auto r = fb::run_cell(nothing, ferry::strategy_kind::pinned, options);
  ASSERT_FALSE(r.verdict.measured());
  EXPECT_TRUE(r.verdict.failed());
  EXPECT_NE(r.verdict.reason().find("no GPU to run on"), std::string::npos) << r.verdict.reason();
  EXPECT_EQ(r.identity.strategy, ferry::strategy_kind::pinned);
  EXPECT_EQ(r.identity.engine, "touch");
}

TEST(TrialLimits, ATrialGetsItsShareOfTheCell) {
  const fb::sampling_limits cell{
      .max_noise = 0.01, .min_samples = 40, .min_seconds = 0.1, .max_seconds = 4.0, .min_trials = 3, .max_trials = 6};
  const auto trial = fb::trial_limits(cell);
  EXPECT_NEAR(trial.max_noise, 0.01 * std::sqrt(1.5), 1e-12);  // three trials pooled reach 0.71%
  EXPECT_EQ(trial.min_samples, 14U);
  EXPECT_NEAR(trial.min_seconds, 0.1 / 3, 1e-12);
  EXPECT_NEAR(trial.max_seconds, 4.0 / 3, 1e-12);  // three capped trials fill the cell's time
  const auto alone = fb::trial_limits({.max_noise = 0.02,
                                       .min_samples = 20,
                                       .min_seconds = 0.05,
                                       .max_seconds = 0.4,
                                       .min_trials = 1,
                                       .max_trials = 1});
  EXPECT_EQ(alone.max_noise, 0.02);
  EXPECT_EQ(alone.min_samples, 20U);
  EXPECT_EQ(alone.max_seconds, 0.4);
}

TEST(TrialLimits, MoreTrialsWhileNoisyUntilACap) {
  const fb::sampling_limits limits{
      .max_noise = 0.01, .min_samples = 40, .min_seconds = 0.1, .max_seconds = 4.0, .min_trials = 3, .max_trials = 6};
  using d = fb::trials_decision;
  EXPECT_EQ(fb::decide_trials(limits, 0, 0, 1.0), d::more);
  EXPECT_EQ(fb::decide_trials(limits, 2, 0.2, 0.001), d::more);  // quiet, but fewer than three
  EXPECT_EQ(fb::decide_trials(limits, 3, 0.3, 0.009), d::settled);
  EXPECT_EQ(fb::decide_trials(limits, 3, 0.3, 0.02), d::more);  // noisier than 1%: another trial
  EXPECT_EQ(fb::decide_trials(limits, 6, 0.6, 0.02), d::trial_cap);
  EXPECT_EQ(fb::decide_trials(limits, 4, 4.0, 0.02), d::time_cap);
}

TEST(NoiseFigures, BetweenTrialsIsTheStandardErrorOfTheTrialsMean) {
  const std::vector<double> three{98, 100, 102};
  EXPECT_NEAR(fb::trial_noise(three), 2.0 / std::sqrt(3.0) / 100, 1e-12);
  EXPECT_EQ(fb::trial_noise(std::vector<double>{100}), 0.0);  // one trial: no spread known
  EXPECT_EQ(fb::trial_noise(std::vector<double>{}), 0.0);
  EXPECT_EQ(fb::trial_noise(std::vector<double>{5, 5, 5}), 0.0);
}

TEST(NoiseFigures, TheCellIsJudgedOnTheLargerWithItsDegreesOfFreedom) {
  fb::result_figures r;
  r.noise = 0.004;
  r.trial_noise = 0.012;
  r.throughput_noise = 0.02;
  r.throughput_trial_noise = 0.01;
  r.trials.resize(4);
  const auto latency = fb::judged_noise(r, false);
  EXPECT_EQ(latency.relative, 0.012);
  EXPECT_EQ(latency.dof, 3.0);  // four trials
  const auto rate = fb::judged_noise(r, true);
  EXPECT_EQ(rate.relative, 0.02);
  EXPECT_TRUE(std::isinf(rate.dof));  // within trials: hundreds of samples
  r.trials.clear();                   // an older report: no trials
  EXPECT_EQ(fb::judged_noise(r, false).relative, 0.004);
}

TEST(NoiseFigures, StudentsTAt99Percent) {
  EXPECT_NEAR(fb::t_quantile(1), 31.8205, 1e-4);
  EXPECT_NEAR(fb::t_quantile(2), 6.9646, 1e-4);
  EXPECT_NEAR(fb::t_quantile(5), 3.3649, 1e-4);
  EXPECT_NEAR(fb::t_quantile(2.5), 5.3531, 0.05);  // interpolated (scipy: 5.3531)
  EXPECT_NEAR(fb::t_quantile(3.7), 3.9205, 0.05);
  EXPECT_NEAR(fb::t_quantile(60), 2.3901, 1e-4);
  EXPECT_NEAR(fb::t_quantile(240), 2.3420, 0.005);
  EXPECT_NEAR(fb::t_quantile(std::numeric_limits<double>::infinity()), 2.3263, 1e-4);
  EXPECT_EQ(fb::t_quantile(0.2), fb::t_quantile(1));
  double last = fb::t_quantile(1);
  for (double dof = 1.1; dof < 2000; dof *= 1.1) {
    const double t = fb::t_quantile(dof);
    EXPECT_LE(t, last + 1e-12) << dof;
    EXPECT_GT(t, 2.3263) << dof;
    last = t;
  }
}

TEST(NoiseFigures, TheThresholdWidensForFewTrials) {
  const fb::noise_estimate exact{.relative = 0.01};
  EXPECT_NEAR(fb::difference_threshold(exact, exact), 2.3263 * std::sqrt(2.0) * 0.01, 1e-12);
  const fb::noise_estimate three_trials{.relative = 0.01, .dof = 2};
  // Two 3-trial noises: Welch gives 4 degrees of freedom.
  EXPECT_NEAR(fb::difference_threshold(three_trials, three_trials), 3.7469 * std::sqrt(2.0) * 0.01, 1e-12);
  EXPECT_GT(fb::difference_threshold(three_trials, exact), fb::difference_threshold(exact, exact));
  EXPECT_EQ(fb::difference_threshold({}, {}), 0.0);
}

// A cell says whether its timed requests began with the L2 cache evicted: only cells that ran
// one request at a time (paired trials) do so, and only while --no-l2-flush is not given.
TEST(TrialAssembly, TheCellSaysWhetherItsRequestsBeganWithACleanL2) {
  const auto assembled = [](bool paired, bool flush) {
    ferry::bench::run_options options;
    options.l2_flush = flush;
    ferry::bench::trial_record t;
    t.paired = paired;
    t.wall_seconds = 0.5;
    for (int i = 0; i < 20; ++i) t.strategy.latency.push_back(100.0 + i);
    t.strategy.requests = 21;
    t.strategy.busy_seconds = 21 * 100e-6;
    ferry::bench::strategy_result r;
    r.identity.strategy = ferry::strategy_kind::pinned;
    return ferry::bench::assemble_result({t}, options, ferry::bench::trials_decision::settled, "synthetic",
                                         std::move(r));
  };
  EXPECT_TRUE(assembled(true, true).identity.l2_flushed);
  EXPECT_FALSE(assembled(true, false).identity.l2_flushed);
  EXPECT_FALSE(assembled(false, true).identity.l2_flushed);  // requests overlapped: nothing to flush between them
  EXPECT_TRUE(ferry::bench::run_options{}.l2_flush) << "flushing is the default";
}

// A lost GPU context ends the whole run: the cell that saw it fails, every other cell stops where
// it is (keeping its trials), and the fault reaches the caller, which reports what was measured.
TEST(RunTrials, DeviceFaultStopsEveryCellAndIsRethrown) {
  std::vector<std::string> log;
  std::vector<fake_cell> cells;
  cells.emplace_back("a", 3, log);
  cells.emplace_back("b", 3, log, 2, [] { throw ferry::device_fault(cudaErrorAssert, "device-side assert"); });
  cells.emplace_back("c", 3, log);
  const auto ptrs = pointers(cells);
  EXPECT_THROW(fb::run_trials(ptrs, fb::trial_schedule::interleaved), ferry::device_fault);
  ASSERT_TRUE(cells[1].failure.has_value());
  EXPECT_TRUE(cells[1].failure->failed);
  EXPECT_NE(cells[1].failure->reason.find("device-side assert"), std::string::npos);
  for (const std::size_t i : {std::size_t{0}, std::size_t{2}}) {
    ASSERT_TRUE(cells[i].stopped.has_value()) << i;
    EXPECT_NE(cells[i].stopped->find("the GPU faulted in b"), std::string::npos) << *cells[i].stopped;
    EXPECT_FALSE(cells[i].failure.has_value());
  }
  // No trial ran after the fault: the second round stopped at b.
  EXPECT_EQ(log.back(), "b");
  EXPECT_EQ(std::count(log.begin(), log.end(), "b"), 2);
  EXPECT_LE(log.size(), 6U);
}
