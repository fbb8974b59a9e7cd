// ferry::choose on the four platform classes: golden picks and the figures they rest on, from
// synthetic profiles (tests/support/synthetic_profile.hpp), and the platform rules, labelled as such,
// without one. ChoiceText checks the sentences describe() makes of them.
#include <gtest/gtest.h>

#include <string>

#include "ferry/engines/builtin.hpp"
#include "ferry/memory/recommendation.hpp"
#include "ferry/session/choose.hpp"
#include "support/synthetic_profile.hpp"

namespace {

using ferry::choice_basis;
using ferry::objective;
using ferry::strategy_kind;
using ferry::transfer_use;
namespace t = ferry::testing;

constexpr std::size_t kb = 1000;
constexpr std::size_t mb = 1000 * kb;
constexpr double tolerance_us = 1e-6;  // the synthetic curves are linear: interpolation is exact but for rounding

ferry::choice pick(const ferry::device_caps& caps, const t::cost_model& model, ferry::io_traffic io,
                   objective goal = objective::latency) {
  const auto profile = t::synthetic_profile(caps, model);
  return ferry::choose(io, caps, &profile, goal);
}

TEST(Choose, DiscretePcieCopiesLargeInputsPinned) {
  const auto caps = t::discrete_pcie_caps();
  const auto profile = t::synthetic_profile(caps, t::discrete_model);
  const auto c = ferry::choose({.input_bytes = 16 * mb, .output_bytes = 4 * kb}, caps, &profile, objective::latency);
  EXPECT_EQ(c.basis, choice_basis::profile);
  EXPECT_EQ(c.strategy, strategy_kind::pinned);
  // 4 KB out adds nothing: the output curve less the input it carried, both at their smallest size.
  EXPECT_NEAR(c.estimated_us, t::discrete_model(strategy_kind::pinned, transfer_use::input_once).at(16 * mb),
              tolerance_us);
  ASSERT_TRUE(c.runner_up.has_value());
  EXPECT_EQ(c.runner_up->strategy, strategy_kind::registered);
  EXPECT_NEAR(c.runner_up->us, t::discrete_model(strategy_kind::registered, transfer_use::input_once).at(16 * mb),
              tolerance_us);
  EXPECT_EQ(c.profile_date, profile.date);
  EXPECT_EQ(c.profile_link, profile.link);
  EXPECT_FALSE(c.reread_costed_as_read_once);
  EXPECT_EQ(c.platform, ferry::platform_class::discrete_pcie);
  EXPECT_FALSE(c.rules_pick_unavailable.has_value());
  // The depth comes from the profile's one finding: 3 for pinned at 1 MiB, capped at 2 for latency.
  ASSERT_TRUE(c.depth_finding.has_value());
  EXPECT_EQ(c.depth_finding->depth, 3);
  EXPECT_EQ(c.depth_finding->strategy, strategy_kind::pinned);
  EXPECT_EQ(c.depth_finding->bytes, std::size_t{1} << 20);
  EXPECT_EQ(c.inflight, 2);
  EXPECT_EQ(c.goal, objective::latency);
}

TEST(Choose, DiscretePcieReadsSmallReadOnceInputsInPlace) {
  const auto c = pick(t::discrete_pcie_caps(), t::discrete_model, {.input_bytes = 64 * kb, .output_bytes = 4 * kb});
  EXPECT_EQ(c.strategy, strategy_kind::mapped);
}

TEST(Choose, DiscretePcieCopiesInputsTheKernelReReads) {
  const auto c = pick(t::discrete_pcie_caps(), t::discrete_model,
                      {.input_bytes = 64 * kb, .output_bytes = 4 * kb, .input_reread = true});
  EXPECT_EQ(c.strategy, strategy_kind::pinned);
  // Costed by the re-read curves, where mapped pays the link on every read.
  EXPECT_FALSE(c.reread_costed_as_read_once);
  EXPECT_TRUE(c.traffic.input_reread);
}

TEST(Choose, DiscretePcieNeverLetsTheCpuReadManagedOutputs) {
  const auto c = pick(t::discrete_pcie_caps(), t::discrete_model, {.input_bytes = 1 * mb, .output_bytes = 64 * mb});
  EXPECT_NE(c.strategy, strategy_kind::managed_prefetch);
  EXPECT_NE(c.strategy, strategy_kind::managed);
}

TEST(Choose, ThroughputTakesTheMeasuredDepth) {
  const auto c = pick(t::discrete_pcie_caps(), t::discrete_model, {.input_bytes = 16 * mb, .output_bytes = 4 * kb},
                      objective::throughput);
  ASSERT_TRUE(c.depth_finding.has_value());
  EXPECT_EQ(c.inflight, c.depth_finding->depth);
  EXPECT_EQ(c.inflight, 3);
  EXPECT_EQ(c.goal, objective::throughput);
}

TEST(Choose, WithoutAMeasuredDepthThePlatformRulesDepthStands) {
  const auto caps = t::discrete_pcie_caps();
  auto profile = t::synthetic_profile(caps, t::discrete_model);
  profile.inflight.clear();
  const auto c = ferry::choose({.input_bytes = 16 * mb}, caps, &profile, objective::throughput);
  EXPECT_EQ(c.basis, choice_basis::profile);
  EXPECT_FALSE(c.depth_finding.has_value());
  EXPECT_EQ(c.inflight, ferry::recommendation_for(ferry::platform_class::discrete_pcie).in_flight_slots);
}

TEST(Choose, IntegratedReadsSharedMemoryInPlace) {
  const auto c = pick(t::integrated_caps(), t::integrated_model, {.input_bytes = 16 * mb, .output_bytes = 16 * mb});
  EXPECT_EQ(c.basis, choice_basis::profile);
  EXPECT_EQ(c.strategy, strategy_kind::mapped);
  // The output curve less its carried input: the same curve here, so only the input counts.
  EXPECT_NEAR(c.estimated_us, t::integrated_model(strategy_kind::mapped, transfer_use::input_once).at(16 * mb),
              tolerance_us);
  ASSERT_TRUE(c.runner_up.has_value());
  EXPECT_EQ(c.runner_up->strategy, strategy_kind::pinned);
  EXPECT_NEAR(c.runner_up->us, t::integrated_model(strategy_kind::pinned, transfer_use::input_once).at(16 * mb),
              tolerance_us);
}

TEST(Choose, AtsReadsSystemMemoryInPlace) {
  const auto c = pick(t::ats_caps(), t::ats_model, {.input_bytes = 16 * mb, .output_bytes = 4 * kb});
  EXPECT_EQ(c.strategy, strategy_kind::system);
  EXPECT_EQ(c.profile_link, "NVLink-C2C (ATS)");
}

TEST(Choose, HmmNeverPicksFaultingSystemMemory) {
  const auto c = pick(t::hmm_caps(), t::hmm_model, {.input_bytes = 16 * mb, .output_bytes = 4 * kb});
  EXPECT_EQ(c.strategy, strategy_kind::pinned);
}

TEST(Choose, StrategiesTheDeviceRefusesAreNeverPicked) {
  // A profile that claims managed is fastest, on a device that cannot run it pipelined.
  const auto caps = t::integrated_caps();
  auto profile = t::synthetic_profile(caps, t::integrated_model);
  for (auto& curve : profile.curves)
    if (curve.strategy == strategy_kind::managed) {
      curve.refused.clear();
      curve.points = {{64 * kb, 1, 0}, {256 * mb, 2, 0}};
    }
  const auto c = ferry::choose({.input_bytes = mb, .output_bytes = mb}, caps, &profile, objective::latency);
  EXPECT_EQ(c.strategy, strategy_kind::mapped);
  ASSERT_TRUE(c.runner_up.has_value());
  EXPECT_NE(c.runner_up->strategy, strategy_kind::managed);
}

TEST(Choose, WithoutAProfileThePlatformRulesDecide) {
  const struct {
    ferry::device_caps caps;
    ferry::platform_class platform;
    strategy_kind expected;
  } cases[] = {
      {t::discrete_pcie_caps(), ferry::platform_class::discrete_pcie, strategy_kind::pinned},
      {t::integrated_caps(), ferry::platform_class::integrated, strategy_kind::mapped},
      {t::ats_caps(), ferry::platform_class::coherent_ats, strategy_kind::system},
      {t::hmm_caps(), ferry::platform_class::coherent_hmm, strategy_kind::pinned},
  };
  for (const auto& k : cases) {
    const auto c = ferry::choose({.input_bytes = mb, .output_bytes = mb}, k.caps, nullptr, objective::latency);
    EXPECT_EQ(c.basis, choice_basis::rules_without_profile);
    EXPECT_EQ(c.platform, k.platform);
    EXPECT_EQ(c.strategy, k.expected);
    EXPECT_EQ(c.strategy, ferry::recommendation_for(k.platform).recommended);
    EXPECT_FALSE(c.rules_pick_unavailable.has_value());
    EXPECT_EQ(c.inflight, 2);
    EXPECT_EQ(c.estimated_us, 0.0);
    EXPECT_FALSE(c.runner_up.has_value());
    EXPECT_FALSE(c.depth_finding.has_value());
  }
}

TEST(Choose, RulesSubstituteWhenTheDeviceLacksTheRecommendedStrategy) {
  auto caps = t::integrated_caps();
  caps.can_map_host_memory = false;  // no mapped, no registered-mapped
  const auto c = ferry::choose({.input_bytes = mb}, caps, nullptr, objective::latency);
  EXPECT_NE(c.strategy, strategy_kind::mapped);
  EXPECT_FALSE(ferry::unavailable_reason(c.strategy, caps).has_value());
  ASSERT_TRUE(c.rules_pick_unavailable.has_value());
  EXPECT_EQ(c.rules_pick_unavailable->strategy, strategy_kind::mapped);
  EXPECT_EQ(c.rules_pick_unavailable->reason, ferry::unavailable_reason(strategy_kind::mapped, caps).value());
}

TEST(Choose, AProfileWithoutUsableCurvesFallsBackToTheRules) {
  const auto caps = t::discrete_pcie_caps();
  auto profile = t::synthetic_profile(caps, t::discrete_model);
  profile.curves.clear();
  const auto c = ferry::choose({.input_bytes = mb, .input_reread = true}, caps, &profile, objective::latency);
  EXPECT_EQ(c.basis, choice_basis::rules_without_curves);
  EXPECT_EQ(c.strategy, strategy_kind::pinned);
  EXPECT_EQ(c.estimated_us, 0.0);
  EXPECT_FALSE(c.reread_costed_as_read_once);  // nothing was costed, by either curve
}

TEST(Choose, ReReadInputsFallBackToReadOnceFiguresWhenNotMeasured) {
  const auto caps = t::discrete_pcie_caps();
  auto profile = t::synthetic_profile(caps, t::discrete_model);
  std::erase_if(profile.curves, [](const auto& c) { return c.use == transfer_use::input_reread; });
  const auto c = ferry::choose({.input_bytes = mb, .input_reread = true}, caps, &profile, objective::latency);
  EXPECT_EQ(c.basis, choice_basis::profile);
  EXPECT_TRUE(c.reread_costed_as_read_once);
  // Read once, a 1 MB input is read in place: what the re-read curves would have ruled out.
  EXPECT_EQ(c.strategy, strategy_kind::mapped);
}

// The sentences users see (ferry info, serve's auto, bench's auto note), from the facts above.
TEST(ChoiceText, TheSentenceNamesTheBasisAndItsFigures) {
  const auto caps = t::discrete_pcie_caps();
  EXPECT_EQ(ferry::describe(pick(caps, t::discrete_model, {.input_bytes = 16 * mb, .output_bytes = 4 * kb})),
            "measured on this machine (2026-11-30T12:00:00Z, PCIe Gen5 x16): for 16 MB in, 4 KB out pinned "
            "costs 340 us per request, next registered 342 us; 2 in-flight slots (throughput stopped rising "
            "beyond 3 for pinned at 1.05 MB); for latency");
  EXPECT_EQ(ferry::describe(
                pick(t::integrated_caps(), t::integrated_model, {.input_bytes = 16 * mb, .output_bytes = 16 * mb})),
            "measured on this machine (2026-11-30T12:00:00Z, integrated (shared DRAM)): for 16 MB in, 16 MB out "
            "mapped costs 170 us per request, next pinned 548 us; 2 in-flight slots (throughput stopped rising "
            "beyond 3 for pinned at 1.05 MB); for latency");

  // Every optional clause: a partial read, re-read figures standing in, no depth measured.
  auto bare = t::synthetic_profile(caps, t::discrete_model);
  std::erase_if(bare.curves, [](const auto& c) { return c.use == transfer_use::input_reread; });
  bare.inflight.clear();
  const auto read_once =
      ferry::choose({.input_bytes = 64 * mb, .output_bytes = 0, .input_reread = true, .input_bytes_read = 640 * kb},
                    caps, &bare, objective::throughput);
  EXPECT_EQ(ferry::describe(read_once),
            "measured on this machine (2026-11-30T12:00:00Z, PCIe Gen5 x16): for 64 MB re-read in (640 KB of it "
            "read), 0 B out mapped costs 31 us per request, next managed-advise 31 us (re-read inputs were not "
            "measured; read-once figures stand in); 2 in-flight slots (platform rules: no depth was measured); for "
            "throughput");

  EXPECT_EQ(ferry::describe(
                ferry::choose({.input_bytes = mb, .output_bytes = mb}, t::ats_caps(), nullptr, objective::latency)),
            "platform rules for coherent-ats, not measured on this machine (no profile; `ferry calibrate` measures "
            "one): system with 2 in-flight slots");
  auto unmappable = t::integrated_caps();
  unmappable.can_map_host_memory = false;
  auto empty = t::synthetic_profile(unmappable, t::integrated_model);
  empty.curves.clear();
  const auto substituted = ferry::choose({.input_bytes = mb}, unmappable, &empty, objective::latency);
  EXPECT_EQ(ferry::describe(substituted),
            "platform rules for integrated, not measured on this machine (the profile holds no measured strategy "
            "for these uses): " +
                std::string(ferry::to_string(substituted.strategy)) +
                " with 2 in-flight slots ('mapped' is unavailable on this device: " +
                ferry::unavailable_reason(strategy_kind::mapped, unmappable).value() + ")");
}

}  // namespace

// What a request moves is the engine's: sparse:0.01 reads one 4 KiB page of its 16 MiB table per
// row (41 rows) and its indices whole; the copy strategies still move the whole table.
TEST(ChooseReads, AnEnginesTrafficCountsTheBytesItReads) {
  const auto eng = ferry::make_builtin_engine("sparse:0.01", {.input_bytes = std::size_t{16} << 20});
  const auto io = ferry::io_traffic_of(*eng, eng->resolve({}));
  EXPECT_EQ(io.input_bytes, (std::size_t{16} << 20) + 41 * 4);
  EXPECT_EQ(io.input_bytes_read, 41 * 4096 + 41 * 4);
  EXPECT_EQ(io.output_bytes, 41U * 4);
  const auto whole = ferry::make_builtin_engine("reduce", {.input_bytes = std::size_t{1} << 20});
  const auto all = ferry::io_traffic_of(*whole, whole->resolve({}));
  EXPECT_EQ(all.input_bytes_read, all.input_bytes);
}

TEST(ChooseReads, AFewBytesReadOfALargeInputAreReadInPlace) {
  const auto caps = t::discrete_pcie_caps();
  const auto profile = t::synthetic_profile(caps, t::discrete_model);
  const std::size_t table = std::size_t{64} << 20;
  const auto copied = ferry::choose({.input_bytes = table, .output_bytes = 4000}, caps, profile, objective::latency);
  EXPECT_EQ(ferry::properties(copied.strategy).path, ferry::data_path::copy) << ferry::describe(copied);
  // Reading every byte is the same request as not saying.
  const auto every = ferry::choose({.input_bytes = table, .output_bytes = 4000, .input_bytes_read = table}, caps,
                                   profile, objective::latency);
  EXPECT_EQ(every.strategy, copied.strategy);
  EXPECT_DOUBLE_EQ(every.estimated_us, copied.estimated_us);
  // A hundredth of it read: in place, only those bytes cross.
  const auto sparse = ferry::choose({.input_bytes = table, .output_bytes = 4000, .input_bytes_read = table / 100}, caps,
                                    profile, objective::latency);
  EXPECT_TRUE(ferry::properties(sparse.strategy).path == ferry::data_path::zero_copy ||
              sparse.strategy == strategy_kind::managed_advise)
      << ferry::describe(sparse);
  EXPECT_LT(sparse.estimated_us, copied.estimated_us / 10) << ferry::describe(sparse);
  // Costed at the bytes read: the read-once curve of the pick at a hundredth of the table.
  EXPECT_NEAR(sparse.estimated_us, t::discrete_model(sparse.strategy, transfer_use::input_once).at(table / 100),
              tolerance_us);
}
