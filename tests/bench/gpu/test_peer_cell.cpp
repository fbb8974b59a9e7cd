// A bench cell of peer, the strategy registered after the built-ins: on two GPUs with peer access
// it is measured beside its recipe and the floor, its outputs checked; on one GPU the cell is
// refused with the strategy's reason (what `ferry bench --strategy all` reports there).
#include <gtest/gtest.h>

#include <string>

#include "bench/measure/cell_runner.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/bench/workload_factory.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/memory/strategy.hpp"

namespace {

ferry::bench::run_options one_client() {
  ferry::bench::run_options options;
  options.session.inflight = 1;
  options.iterations = 100;
  options.check_every = 8;
  options.um_counters = false;
  return options;
}

ferry::bench::workload touch_4mb() {
  ferry::bench::workload_request request;
  request.engine = "touch";
  request.input_bytes = std::size_t{4} << 20;
  return ferry::bench::make_workload(request);
}

TEST(PeerCell, IsMeasuredBesideItsRecipeAndTheFloor) {
  const auto caps = ferry::query_device(0);
  const auto peer = ferry::parse_strategy("peer");
  if (auto reason = ferry::unavailable_reason(peer, caps)) GTEST_SKIP() << "peer is not available: " << *reason;
  const auto r = ferry::bench::run_cell(touch_4mb(), peer, one_client());
  ASSERT_TRUE(r.verdict.measured()) << r.verdict.reason();
  EXPECT_TRUE(r.verdict.output_checked);
  EXPECT_TRUE(r.verdict.output_matches) << r.verdict.check_detail;
  ASSERT_TRUE(r.diagnostics.recipe.has_value()) << r.diagnostics.recipe_note;
  EXPECT_NE(r.diagnostics.recipe->steps.find("peer access"), std::string::npos) << r.diagnostics.recipe->steps;
  EXPECT_TRUE(r.diagnostics.recipe->output_matches) << r.diagnostics.recipe->check_detail;
  ASSERT_TRUE(r.diagnostics.floor.has_value()) << r.diagnostics.recipe_note;
}

TEST(PeerCell, IsRefusedWithTheReasonOnOneGpu) {
  if (ferry::cuda_device_count() != 1) GTEST_SKIP() << "this machine has more than one GPU";
  const auto r = ferry::bench::run_cell(touch_4mb(), ferry::parse_strategy("peer"), one_client());
  EXPECT_FALSE(r.verdict.measured());
  EXPECT_FALSE(r.verdict.failed()) << "a strategy the platform cannot do is refused, not failed: "
                                   << r.verdict.reason();
  EXPECT_NE(r.verdict.reason().find("this machine has one GPU"), std::string::npos) << r.verdict.reason();
}

}  // namespace
