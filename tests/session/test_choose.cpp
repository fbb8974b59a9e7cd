// ferry::choose on the four platform classes: golden picks and reasons from synthetic profiles
// (tests/cpu/synthetic_profile.hpp), and the platform rules, labelled as such, without one.
#include <gtest/gtest.h>

#include <string>

#include "support/synthetic_profile.hpp"
#include "ferry/builtin.hpp"
#include "ferry/choose.hpp"

namespace {

using ferry::objective;
using ferry::strategy_kind;
namespace t = ferry::testing;

constexpr std::size_t kb = 1000;
constexpr std::size_t mb = 1000 * kb;

ferry::choice pick(const ferry::device_caps& caps, const t::cost_model& model, ferry::io_traffic io,
                   objective goal = objective::latency) {
  const auto profile = t::synthetic_profile(caps, model);
  return ferry::choose(io, caps, &profile, goal);
}

TEST(Choose, DiscretePcieCopiesLargeInputsPinned) {
  const auto c = pick(t::discrete_pcie_caps(), t::discrete_model, {.input_bytes = 16 * mb, .output_bytes = 4 * kb});
  EXPECT_EQ(c.strategy, strategy_kind::pinned);
  EXPECT_TRUE(c.measured);
  EXPECT_EQ(c.inflight, 2);  // latency: the 3 found for throughput, capped at 2
  EXPECT_EQ(c.reason,
            "measured on this machine (2026-11-30T12:00:00Z, PCIe Gen5 x16): for 16 MB in, 4 KB out pinned "
            "costs 340 us per request, next registered 342 us; 2 in-flight slots (throughput stopped rising "
            "beyond 3 for pinned at 1.05 MB); for latency");
}

TEST(Choose, DiscretePcieReadsSmallReadOnceInputsInPlace) {
  const auto c = pick(t::discrete_pcie_caps(), t::discrete_model, {.input_bytes = 64 * kb, .output_bytes = 4 * kb});
  EXPECT_EQ(c.strategy, strategy_kind::mapped);
}

TEST(Choose, DiscretePcieCopiesInputsTheKernelReReads) {
  const auto c = pick(t::discrete_pcie_caps(), t::discrete_model,
                      {.input_bytes = 64 * kb, .output_bytes = 4 * kb, .input_reread = true});
  EXPECT_EQ(c.strategy, strategy_kind::pinned);
  EXPECT_NE(c.reason.find("64 KB re-read in"), std::string::npos) << c.reason;
}

TEST(Choose, DiscretePcieNeverLetsTheCpuReadManagedOutputs) {
  const auto c = pick(t::discrete_pcie_caps(), t::discrete_model, {.input_bytes = 1 * mb, .output_bytes = 64 * mb});
  EXPECT_NE(c.strategy, strategy_kind::managed_prefetch);
  EXPECT_NE(c.strategy, strategy_kind::managed);
}

TEST(Choose, ThroughputTakesTheMeasuredDepth) {
  const auto c = pick(t::discrete_pcie_caps(), t::discrete_model, {.input_bytes = 16 * mb, .output_bytes = 4 * kb},
                      objective::throughput);
  EXPECT_EQ(c.inflight, 3);
  EXPECT_NE(c.reason.find("for throughput"), std::string::npos) << c.reason;
}

TEST(Choose, IntegratedReadsSharedMemoryInPlace) {
  const auto c = pick(t::integrated_caps(), t::integrated_model, {.input_bytes = 16 * mb, .output_bytes = 16 * mb});
  EXPECT_EQ(c.strategy, strategy_kind::mapped);
  EXPECT_EQ(c.reason,
            "measured on this machine (2026-11-30T12:00:00Z, integrated (shared DRAM)): for 16 MB in, 16 MB out "
            "mapped costs 170 us per request, next pinned 548 us; 2 in-flight slots (throughput stopped rising "
            "beyond 3 for pinned at 1.05 MB); for latency");
}

TEST(Choose, AtsReadsSystemMemoryInPlace) {
  const auto c = pick(t::ats_caps(), t::ats_model, {.input_bytes = 16 * mb, .output_bytes = 4 * kb});
  EXPECT_EQ(c.strategy, strategy_kind::system);
  EXPECT_NE(c.reason.find("NVLink-C2C (ATS)"), std::string::npos) << c.reason;
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
}

TEST(Choose, WithoutAProfileThePlatformRulesSaySo) {
  const struct {
    ferry::device_caps caps;
    strategy_kind expected;
    const char* reason;
  } cases[] = {
      {t::discrete_pcie_caps(), strategy_kind::pinned,
       "platform rules for discrete-pcie, not measured on this machine (no profile; `ferry calibrate` measures "
       "one): pinned with 2 in-flight slots"},
      {t::integrated_caps(), strategy_kind::mapped,
       "platform rules for integrated, not measured on this machine (no profile; `ferry calibrate` measures one): "
       "mapped with 2 in-flight slots"},
      {t::ats_caps(), strategy_kind::system,
       "platform rules for coherent-ats, not measured on this machine (no profile; `ferry calibrate` measures "
       "one): system with 2 in-flight slots"},
      {t::hmm_caps(), strategy_kind::pinned,
       "platform rules for coherent-hmm, not measured on this machine (no profile; `ferry calibrate` measures "
       "one): pinned with 2 in-flight slots"},
  };
  for (const auto& k : cases) {
    const auto c = ferry::choose({.input_bytes = mb, .output_bytes = mb}, k.caps, nullptr, objective::latency);
    EXPECT_EQ(c.strategy, k.expected);
    EXPECT_FALSE(c.measured);
    EXPECT_EQ(c.inflight, 2);
    EXPECT_EQ(c.reason, k.reason);
  }
}

TEST(Choose, RulesSubstituteWhenTheDeviceLacksTheRecommendedStrategy) {
  auto caps = t::integrated_caps();
  caps.can_map_host_memory = false;  // no mapped, no registered-mapped
  const auto c = ferry::choose({.input_bytes = mb}, caps, nullptr, objective::latency);
  EXPECT_NE(c.strategy, strategy_kind::mapped);
  EXPECT_NE(c.reason.find("'mapped' is unavailable on this device"), std::string::npos) << c.reason;
}

TEST(Choose, AProfileWithoutUsableCurvesFallsBackToTheRules) {
  const auto caps = t::discrete_pcie_caps();
  auto profile = t::synthetic_profile(caps, t::discrete_model);
  profile.curves.clear();
  const auto c = ferry::choose({.input_bytes = mb}, caps, &profile, objective::latency);
  EXPECT_FALSE(c.measured);
  EXPECT_NE(c.reason.find("the profile holds no measured strategy"), std::string::npos) << c.reason;
}

TEST(Choose, ReReadInputsFallBackToReadOnceFiguresWhenNotMeasured) {
  const auto caps = t::discrete_pcie_caps();
  auto profile = t::synthetic_profile(caps, t::discrete_model);
  std::erase_if(profile.curves, [](const auto& c) { return c.use == ferry::transfer_use::input_reread; });
  const auto c = ferry::choose({.input_bytes = mb, .input_reread = true}, caps, &profile, objective::latency);
  EXPECT_TRUE(c.measured);
  EXPECT_NE(c.reason.find("re-read inputs were not measured"), std::string::npos) << c.reason;
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
  EXPECT_EQ(ferry::properties(copied.strategy).path, ferry::data_path::copy) << copied.reason;
  // Reading every byte is the same request as not saying.
  const auto every = ferry::choose({.input_bytes = table, .output_bytes = 4000, .input_bytes_read = table}, caps,
                                   profile, objective::latency);
  EXPECT_EQ(every.strategy, copied.strategy);
  EXPECT_DOUBLE_EQ(every.estimated_us, copied.estimated_us);
  // A hundredth of it read: in place, only those bytes cross.
  const auto sparse = ferry::choose({.input_bytes = table, .output_bytes = 4000, .input_bytes_read = table / 100},
                                    caps, profile, objective::latency);
  EXPECT_TRUE(ferry::properties(sparse.strategy).path == ferry::data_path::zero_copy ||
              sparse.strategy == strategy_kind::managed_advise)
      << sparse.reason;
  EXPECT_LT(sparse.estimated_us, copied.estimated_us / 10) << sparse.reason;
  EXPECT_NE(sparse.reason.find("(671 KB of it read)"), std::string::npos) << sparse.reason;
}
