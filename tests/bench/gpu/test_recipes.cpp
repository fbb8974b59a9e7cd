// Recipes on the GPU: every strategy's hand-written request computes what the strategy's session
// computes (touch: 2x + 1 of its own input, element by element), and a bench cell times the
// recipe and the floor beside the strategy and checks their outputs too.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "bench/measure/cell_runner.hpp"
#include "bench/measure/recipes/recipe.hpp"
#include "core/scoped_device.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/bench/workload_factory.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/device/gpu_clocks.hpp"
#include "ferry/engines/builtin.hpp"
#include "support/strategy_test_name.hpp"

namespace {

using ferry::strategy_kind;

class RecipeOnEveryStrategy : public ::testing::TestWithParam<strategy_kind> {
 protected:
  void SetUp() override {
    caps_ = ferry::query_device(0);
    if (auto reason = ferry::unavailable_reason(GetParam(), caps_)) GTEST_SKIP() << *reason;
  }
  ferry::device_caps caps_;
};

TEST_P(RecipeOnEveryStrategy, ComputesTouchOnFreshInputEveryRequest) {
  auto eng = ferry::make_builtin_engine("touch", {.input_bytes = std::size_t{1} << 20});
  const auto io = eng->resolve({});
  auto recipe = ferry::bench::make_recipe(GetParam(), *eng, io, caps_, ferry::oversubscription::refuse);
  ferry::core::scoped_device on_device(caps_.ordinal);
  EXPECT_EQ(recipe->strategy(), GetParam());
  EXPECT_FALSE(recipe->steps().empty());
  ASSERT_EQ(recipe->input_count(), 1u);
  ASSERT_EQ(recipe->output_count(), 1u);
  for (int request = 0; request < 3; ++request) {
    auto* in = reinterpret_cast<float*>(recipe->input(0).data());
    const std::size_t n = recipe->input(0).size() / sizeof(float);
    for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<float>(request * 100 + static_cast<int>(i % 13));
    recipe->stage_inputs_untimed();
    recipe->run_blocking();
    recipe->fetch_outputs_untimed();
    const auto* out = reinterpret_cast<const float*>(recipe->output(0).data());
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(out[i], static_cast<float>(request * 100 + static_cast<int>(i % 13)) * 2.0F + 1.0F)
          << ferry::to_string(GetParam()) << " request " << request << " element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryStrategy, RecipeOnEveryStrategy, ::testing::ValuesIn(ferry::all_strategies),
                         strategy_test_name);

// A cell that runs one request at a time times the recipe and the floor beside the strategy, in
// the same rounds, and checks all three against the device reference.
TEST(BenchCellWithRecipes, RecipeAndFloorAreMeasuredAndChecked) {
  const auto w = ferry::bench::make_workload({.engine = "reduce", .input_bytes = 1 << 20, .max_concurrency = 4});
  ferry::bench::run_options options;
  options.iterations = 40;
  options.check_every = 8;
  options.um_counters = false;
  for (const auto k : {strategy_kind::pinned, strategy_kind::managed_prefetch, strategy_kind::device}) {
    SCOPED_TRACE(std::string(ferry::to_string(k)));
    const auto r = ferry::bench::run_cell(w, k, options);
    ASSERT_TRUE(r.verdict.measured()) << r.verdict.reason();
    ASSERT_TRUE(r.diagnostics.recipe.has_value()) << r.diagnostics.recipe_note;
    // 40 latency samples of the strategy take 80 rounds: every other one of its requests is timed
    // with events for the stage breakdown instead. The recipe runs in every round.
    EXPECT_EQ(r.figures.iterations, 40u);
    EXPECT_GE(r.diagnostics.recipe->iterations, 40u);
    EXPECT_TRUE(r.diagnostics.recipe->output_checked);
    EXPECT_TRUE(r.diagnostics.recipe->output_matches) << r.diagnostics.recipe->check_detail;
    EXPECT_GT(r.diagnostics.recipe->latency_us.median, 0.0);
    EXPECT_GT(r.figures.noise, 0.0);
    if (k == strategy_kind::device) {
      EXPECT_FALSE(r.diagnostics.floor.has_value());  // the device strategy's recipe is the floor
    } else {
      ASSERT_TRUE(r.diagnostics.floor.has_value());
      EXPECT_TRUE(r.diagnostics.floor->output_matches) << r.diagnostics.floor->check_detail;
    }
    EXPECT_GT(r.figures.enqueue_us.median, 0.0);
  }
}

TEST(BenchCellWithRecipes, SeveralInFlightHaveNoRecipeAndSayWhy) {
  const auto w = ferry::bench::make_workload({.engine = "reduce", .input_bytes = 1 << 20, .max_concurrency = 4});
  ferry::bench::run_options options;
  options.session.inflight = 2;
  options.iterations = 30;
  options.um_counters = false;
  const auto r = ferry::bench::run_cell(w, strategy_kind::pinned, options);
  ASSERT_TRUE(r.verdict.measured()) << r.verdict.reason();
  EXPECT_FALSE(r.diagnostics.recipe.has_value());
  EXPECT_NE(r.diagnostics.recipe_note.find("one request at a time"), std::string::npos) << r.diagnostics.recipe_note;
}

// managed-prefetch keeps outputs in host pages the GPU writes over the link, and prefetches only
// its inputs (the output path a careful user takes: see managed_buffer.hpp).
TEST(ManagedPrefetch, OutputsLiveInHostPagesAndOnlyInputsArePrefetched) {
  const auto caps = ferry::query_device(0);
  if (auto reason = ferry::unavailable_reason(strategy_kind::managed_prefetch, caps)) GTEST_SKIP() << *reason;
  auto in = ferry::io_buffer::allocate(strategy_kind::managed_prefetch,
                                       {.bytes = 1 << 20, .dir = ferry::direction::input}, caps);
  auto out = ferry::io_buffer::allocate(strategy_kind::managed_prefetch,
                                        {.bytes = 1 << 20, .dir = ferry::direction::output}, caps);
  ferry::core::scoped_device on_device(0);
  ferry::stream s;
  std::memset(in.host().data(), 1, in.bytes());
  in.to_device(s);
  out.to_device(s);
  out.to_host(s);
  s.synchronize_blocking();
  int preferred = -3, in_prefetched = -3, out_prefetched = -3;
  FERRY_CUDA_TRY(cudaMemRangeGetAttribute(&preferred, sizeof preferred, cudaMemRangeAttributePreferredLocation,
                                          out.device_address(), out.bytes()));
  FERRY_CUDA_TRY(cudaMemRangeGetAttribute(&in_prefetched, sizeof in_prefetched,
                                          cudaMemRangeAttributeLastPrefetchLocation, in.device_address(), in.bytes()));
  FERRY_CUDA_TRY(cudaMemRangeGetAttribute(&out_prefetched, sizeof out_prefetched,
                                          cudaMemRangeAttributeLastPrefetchLocation, out.device_address(),
                                          out.bytes()));
  EXPECT_EQ(preferred, cudaCpuDeviceId);
  EXPECT_EQ(in_prefetched, 0);
  EXPECT_EQ(out_prefetched, cudaInvalidDeviceId) << "an output was prefetched";
}

TEST(GpuClocks, AMonitorSeesTheClocksWhereNvmlIsThere) {
  const auto caps = ferry::query_device(0);
  if (!ferry::read_clocks(caps.pci_bus_id)) GTEST_SKIP() << "NVML is not available here";
  ferry::clock_monitor monitor(caps.pci_bus_id, std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto record = monitor.finish();
  ASSERT_TRUE(record.has_value());
  EXPECT_GE(record->samples, 3u);
  EXPECT_GT(record->sm_mhz_max, 0u);
  EXPECT_LE(record->sm_mhz_min, record->sm_mhz_max);
  EXPECT_GT(record->mem_mhz_max, 0u);
}

}  // namespace
