// --slowdown on the GPU: a known change of both figures `ferry bench compare` judges. The spin
// kernel after the engine makes the GPU's time per request (gpu_us, from the slot's events)
// longer by the fraction asked, the host's wait makes the end-to-end latency longer by the same
// fraction (not by both together), and neither changes what the requests compute.
#include <gtest/gtest.h>

#include "bench/measure/cell_runner.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/bench/workload_factory.hpp"

namespace {

ferry::bench::strategy_result measured(const ferry::bench::workload& w, ferry::strategy_kind strategy,
                                       double slowdown) {
  ferry::bench::run_options options;
  options.iterations = 120;
  options.check_every = 16;
  options.um_counters = false;
  options.slowdown = slowdown;
  return ferry::bench::run_cell(w, strategy, options);
}

}  // namespace

TEST(BenchSlowdown, MovesTheGpuTimeAndTheLatencyByTheFractionAsked) {
  // 32 passes over the input in one kernel: the device cell's span (~60-100 µs) is the GPU's own.
  // A single pass takes ~20 µs, most of it the host's launches: there the appended kernel costs
  // what the host takes to launch it, which moves with the host (+6% and +55% of 25% asked, on
  // two calls), as compare marks such spans.
  const auto w = ferry::bench::make_workload({.engine = "reduce:32", .input_bytes = std::size_t{16} << 20});
  for (const auto strategy : {ferry::strategy_kind::pinned, ferry::strategy_kind::device}) {
    SCOPED_TRACE(std::string(ferry::to_string(strategy)));
    const auto plain = measured(w, strategy, 0);
    const auto slowed = measured(w, strategy, 0.25);
    ASSERT_TRUE(plain.verdict.measured()) << plain.verdict.reason();
    ASSERT_TRUE(slowed.verdict.measured()) << slowed.verdict.reason();
    ASSERT_GT(plain.figures.gpu_us.count, 0U);
    ASSERT_GT(plain.figures.gpu_us.median, 0.0);
    EXPECT_GT(plain.figures.gpu_noise, 0.0);
    EXPECT_GT(plain.figures.trials.front().gpu_median_us, 0.0);
    // 25% asked; the delay follows the median of the spans, so a few percent either way. The spin
    // kernel's own cost is counted in it.
    const double gpu_ratio = slowed.figures.gpu_us.median / plain.figures.gpu_us.median;
    EXPECT_GT(gpu_ratio, 1.15) << plain.figures.gpu_us.median << " -> " << slowed.figures.gpu_us.median;
    EXPECT_LT(gpu_ratio, 1.40) << plain.figures.gpu_us.median << " -> " << slowed.figures.gpu_us.median;
    // End to end by the fraction too, not by the GPU's delay and the host's wait added up.
    const double latency_ratio = slowed.figures.latency_us.median / plain.figures.latency_us.median;
    EXPECT_GT(latency_ratio, 1.12) << plain.figures.latency_us.median << " -> " << slowed.figures.latency_us.median;
    EXPECT_LT(latency_ratio, 1.45) << plain.figures.latency_us.median << " -> " << slowed.figures.latency_us.median;
    EXPECT_TRUE(slowed.verdict.output_matches) << slowed.verdict.check_detail;
    EXPECT_NE(slowed.diagnostics.notes.front().find("slowed down on purpose"), std::string::npos);
    // A quarter of either span is more than one kernel costs: no note of a delay that overshot.
    for (const auto& note : slowed.diagnostics.notes)
      EXPECT_EQ(note.find("spin kernel's own cost"), std::string::npos) << note;
  }
}
