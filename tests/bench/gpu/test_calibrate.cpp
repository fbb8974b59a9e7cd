// A quick calibration of GPU 0 into a temporary folder, read back as this GPU's profile; and the
// re-reading reduce computing what the single pass computes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "bench/measure/cell_runner.hpp"
#include "ferry/bench/calibrate.hpp"
#include "ferry/bench/workload_factory.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/memory/profile.hpp"
#include "ferry/memory/strategy.hpp"
#include "ferry/session/choose.hpp"

namespace {

namespace fs = std::filesystem;

TEST(Calibrate, QuickSweepSavesAProfileThatLoadsBackForThisGpu) {
  const fs::path dir = fs::temp_directory_path() / "ferry_calibrate_test";
  fs::remove_all(dir);
  const auto caps = ferry::query_device(0);
  ASSERT_FALSE(caps.uuid.empty());
  ASSERT_EQ(caps.uuid.rfind("GPU-", 0), 0U) << caps.uuid;

  const auto run = ferry::bench::calibrate(0, ferry::bench::sweep_depth::quick);
  const fs::path path = dir / (caps.uuid + ".json");
  ferry::save_profile(run.profile, path);
  const auto found = ferry::load_profile(path, caps);
  fs::remove_all(dir);
  ASSERT_EQ(found.status, ferry::profile_status::loaded) << found.message;
  const auto& p = *found.profile;
  EXPECT_EQ(p.mode, "quick");
  EXPECT_EQ(p.link, ferry::describe_link(caps));

  // Every strategy that feeds host data, under each use: measured at every size that fit, or
  // refused with the platform's reason. Data kept in GPU memory (the floor, peer) has no curve.
  for (const auto k : ferry::all_strategies) {
    if (ferry::properties(k).path == ferry::data_path::resident) {
      EXPECT_EQ(p.find(k, ferry::transfer_use::input_once), nullptr) << ferry::to_string(k);
      continue;
    }
    for (const auto use : ferry::all_transfer_uses) {
      const auto* curve = p.find(k, use);
      ASSERT_NE(curve, nullptr) << ferry::to_string(k) << " " << ferry::to_string(use);
      if (const auto why = ferry::unavailable_reason(k, caps)) {
        EXPECT_EQ(curve->refused, *why);
      } else if (curve->refused.empty()) {
        EXPECT_FALSE(curve->points.empty()) << ferry::to_string(k);
        for (const auto& pt : curve->points) EXPECT_GT(pt.median_us, 0);
      }
    }
  }
  const auto* pinned = p.find(ferry::strategy_kind::pinned, ferry::transfer_use::input_once);
  ASSERT_NE(pinned, nullptr);
  ASSERT_TRUE(pinned->refused.empty()) << pinned->refused;
  EXPECT_EQ(pinned->points.front().bytes, std::size_t{64} << 10);
  ASSERT_FALSE(p.inflight.empty());
  EXPECT_GE(p.inflight.front().depth, 1);

  // The profile now drives the choice, and says it was measured here.
  const auto c =
      ferry::choose({.input_bytes = std::size_t{1} << 20, .output_bytes = 4000}, caps, p, ferry::objective::latency);
  EXPECT_EQ(c.basis, ferry::choice_basis::profile);
  EXPECT_EQ(c.profile_date, p.date);
  EXPECT_NE(ferry::describe(c).find("measured on this machine"), std::string::npos) << ferry::describe(c);
  // A quick sweep should stay quick: a generous bound, to catch a runaway rather than to time it.
  EXPECT_LT(run.seconds, 120.0);
}

TEST(Calibrate, ReReadingReduceMatchesTheSinglePass) {
  const auto once = ferry::bench::make_workload({.engine = "reduce", .input_bytes = std::size_t{1} << 20});
  const auto four = ferry::bench::make_workload({.engine = "reduce:4", .input_bytes = std::size_t{1} << 20});
  ferry::bench::run_options o;
  o.iterations = 8;
  o.recipes = false;
  o.check_every = 1;
  const auto a = ferry::bench::run_cell(once, ferry::strategy_kind::pinned, o);
  const auto b = ferry::bench::run_cell(four, ferry::strategy_kind::mapped, o);
  ASSERT_TRUE(a.verdict.measured()) << a.verdict.reason();
  ASSERT_TRUE(b.verdict.measured()) << b.verdict.reason();
  EXPECT_TRUE(a.verdict.output_matches);
  EXPECT_TRUE(b.verdict.output_matches);  // checked against the one-pass host reference
}

}  // namespace
