// ferry::choose_per_tensor: the request's pick for most tensors, and a tensor's own where its
// curve says it is clearly cheaper another way; synthetic profiles (tests/cpu/synthetic_profile.hpp)
// on the built-in sparse engine's tensors (a large f32 table, a small i32 index input, a small
// f32 output), no GPU needed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/synthetic_profile.hpp"
#include "ferry/builtin.hpp"
#include "ferry/choose.hpp"

namespace {

using ferry::objective;
using ferry::strategy_kind;
using ferry::tensor_strategy;
namespace t = ferry::testing;

// sparse:0.01 over a 16 MiB table: "table" f32 16 MiB, "indices" i32 [41] (164 bytes),
// output "rows" f32 [41].
std::vector<ferry::tensor_spec> sparse_io() {
  return ferry::make_builtin_engine("sparse:0.01", {.input_bytes = std::size_t{16} << 20})->resolve({});
}

// A PCIe GPU where a copy has a clear fixed cost: a mapped read saves 10 us on a tiny input, and
// costs far more than a copy on a large one (20 us + B at 50 GB/s against 10 us + B at 40 GB/s).
ferry::testing::cost copy_has_a_fixed_cost(strategy_kind k, ferry::transfer_use use) {
  if (k == strategy_kind::mapped) return {10, 40};
  return t::discrete_model(k, use);
}

const ferry::tensor_pick& pick_of(const ferry::tensor_choice& c, const std::string& tensor) {
  for (const auto& p : c.tensors)
    if (p.tensor == tensor) return p;
  throw std::runtime_error("no pick for " + tensor);
}

TEST(ChoosePerTensor, SmallInputsGoMappedWhileTheLargeOneIsCopied) {
  const auto io = sparse_io();
  ASSERT_EQ(io.size(), 3U);
  ASSERT_EQ(io[1].name, "indices");
  ASSERT_EQ(io[1].bytes(), 164U);
  const auto caps = t::discrete_pcie_caps();
  const auto profile = t::synthetic_profile(caps, copy_has_a_fixed_cost);
  const auto c = ferry::choose_per_tensor(io, caps, &profile, objective::throughput);
  EXPECT_TRUE(c.measured);
  EXPECT_EQ(c.strategy, strategy_kind::pinned);  // the request is 16 MiB in: copied
  EXPECT_EQ(c.inflight, 3);                      // the profile's depth, for throughput
  EXPECT_EQ(c.overrides, (std::vector<tensor_strategy>{{"indices", strategy_kind::mapped}}));
  ASSERT_EQ(c.tensors.size(), 3U);
  EXPECT_EQ(pick_of(c, "table").strategy, strategy_kind::pinned);
  EXPECT_EQ(pick_of(c, "indices").strategy, strategy_kind::mapped);
  EXPECT_EQ(pick_of(c, "rows").strategy, strategy_kind::pinned);
  EXPECT_EQ(pick_of(c, "indices").reason,
            "'indices' (input, 164 B): mapped, 11.6 us against 21.3 us by the request's pick pinned (saves 9.7 us, "
            "45%)");
  // The output costs what it adds to a request: the same under every strategy of this model.
  const std::string rows = pick_of(c, "rows").reason;
  EXPECT_NE(rows.find("'rows' (output, 164 B): pinned, the request's pick, costs as little as any"), std::string::npos)
      << rows;
  EXPECT_NE(pick_of(c, "table").reason.find("'table' (input, 16.8 MB): pinned"), std::string::npos)
      << pick_of(c, "table").reason;
  EXPECT_EQ(c.reason, ferry::choose({.input_bytes = (std::size_t{16} << 20) + 164, .output_bytes = 164}, caps,
                                    &profile, objective::throughput)
                          .reason);
}

TEST(ChoosePerTensor, WithoutAProfileEveryTensorGoesByTheRules) {
  const auto io = sparse_io();
  for (const auto& caps : {t::discrete_pcie_caps(), t::integrated_caps(), t::ats_caps()}) {
    const auto c = ferry::choose_per_tensor(io, caps, nullptr, objective::latency);
    const auto rules = ferry::choose({.input_bytes = (std::size_t{16} << 20) + 164, .output_bytes = 164}, caps,
                                     nullptr, objective::latency);
    EXPECT_FALSE(c.measured);
    EXPECT_EQ(c.strategy, rules.strategy) << caps.name;
    EXPECT_EQ(c.inflight, rules.inflight);
    EXPECT_TRUE(c.overrides.empty());
    ASSERT_EQ(c.tensors.size(), 3U);
    for (const auto& p : c.tensors) {
      EXPECT_EQ(p.strategy, rules.strategy);
      EXPECT_EQ(p.estimated_us, 0.0);
      EXPECT_NE(p.reason.find("not measured on this machine"), std::string::npos) << p.reason;
      EXPECT_NE(p.reason.find("'" + p.tensor + "'"), std::string::npos) << p.reason;
    }
  }
}

TEST(ChoosePerTensor, AGainUnderTheMarginsKeepsTheRequestsPick) {
  // Reading a tiny input in place saves 1 us of pinned's fixed 20 us (at the profile's smallest
  // size, 64 KiB, which is what smaller tensors are costed at): under 2 us.
  const auto caps = t::discrete_pcie_caps();
  const auto profile = t::synthetic_profile(caps, [](strategy_kind k, ferry::transfer_use use) {
    if (k == strategy_kind::mapped || k == strategy_kind::managed_advise) return t::cost{19, 48};
    return t::discrete_model(k, use);
  });
  const auto c = ferry::choose_per_tensor(sparse_io(), caps, &profile, objective::latency);
  EXPECT_EQ(c.strategy, strategy_kind::pinned);
  EXPECT_TRUE(c.overrides.empty());
  const auto& indices = pick_of(c, "indices");
  EXPECT_EQ(indices.strategy, strategy_kind::pinned);
  EXPECT_NE(indices.reason.find("mapped would save 0.9 us (4.4%), under the 2 us and 3% a second strategy must save"),
            std::string::npos)
      << indices.reason;

  // 16 MB in and 16 MB out: registered reads a little faster than pinned (3 us, 1%), but writes
  // outputs slower, so the request's pick is pinned, and the input keeps it: under 3%.
  const auto even = t::synthetic_profile(caps, [](strategy_kind k, ferry::transfer_use use) {
    if (k == strategy_kind::registered) return use == ferry::transfer_use::output ? t::cost{20, 45} : t::cost{20, 50.5};
    return t::discrete_model(k, use);
  });
  const std::vector<ferry::tensor_spec> io{
      {.name = "a", .type = ferry::dtype::f32, .shape = {4'000'000}, .role = ferry::tensor_role::input},
      {.name = "b", .type = ferry::dtype::f32, .shape = {4'000'000}, .role = ferry::tensor_role::output}};
  const auto big = ferry::choose_per_tensor(io, caps, &even, objective::latency);
  EXPECT_EQ(big.strategy, strategy_kind::pinned);
  EXPECT_TRUE(big.overrides.empty());
  EXPECT_NE(pick_of(big, "a").reason.find("registered would save 3.2 us (0.9%)"), std::string::npos)
      << pick_of(big, "a").reason;
}

TEST(ChoosePerTensor, UnavailableRefusedAndDeviceStrategiesAreNeverPicked) {
  const auto capable = t::discrete_pcie_caps();
  auto profile = t::synthetic_profile(capable, copy_has_a_fixed_cost);
  // `device` measured as free: still never a way to feed host inputs.
  for (const auto use : ferry::all_transfer_uses)
    profile.curves.push_back({.strategy = strategy_kind::device,
                              .use = use,
                              .refused = {},
                              .points = {{1000, 0.5, 0.01}, {std::size_t{256} << 20, 1.0, 0.01}}});
  // A device that cannot map host memory: mapped and registered-mapped are unavailable, whatever
  // the profile says.
  auto caps = capable;
  caps.can_map_host_memory = false;
  auto c = ferry::choose_per_tensor(sparse_io(), caps, &profile, objective::latency);
  ASSERT_TRUE(c.measured);
  for (const auto& p : c.tensors) {
    EXPECT_FALSE(ferry::unavailable_reason(p.strategy, caps).has_value()) << p.tensor << ": " << p.reason;
    EXPECT_NE(p.strategy, strategy_kind::device) << p.reason;
  }
  // mapped recorded as refused on the capable device: not picked either.
  for (auto& curve : profile.curves)
    if (curve.strategy == strategy_kind::mapped) {
      curve.refused = "refused in this test";
      curve.points.clear();
    }
  c = ferry::choose_per_tensor(sparse_io(), capable, &profile, objective::latency);
  for (const auto& p : c.tensors) {
    EXPECT_NE(p.strategy, strategy_kind::mapped) << p.reason;
    EXPECT_NE(p.strategy, strategy_kind::device) << p.reason;
  }
}

TEST(ChoosePerTensor, ADynamicTensorGoesByTheRequestsPickAndNothingThrows) {
  const auto caps = t::discrete_pcie_caps();
  const auto profile = t::synthetic_profile(caps, copy_has_a_fixed_cost);
  auto io = sparse_io();
  io[1].shape = {ferry::dynamic_dim};
  const auto c = ferry::choose_per_tensor(io, caps, &profile, objective::latency);
  EXPECT_TRUE(c.overrides.empty());
  EXPECT_EQ(pick_of(c, "indices").strategy, c.strategy);
  EXPECT_NE(pick_of(c, "indices").reason.find("dynamic"), std::string::npos) << pick_of(c, "indices").reason;
  EXPECT_TRUE(ferry::choose_per_tensor({}, caps, &profile, objective::latency).tensors.empty());
}

TEST(ChoosePerTensor, TheOptionalOverloadIsTheSame) {
  const auto caps = t::discrete_pcie_caps();
  const std::optional<ferry::device_profile> profile = t::synthetic_profile(caps, copy_has_a_fixed_cost);
  EXPECT_EQ(ferry::choose_per_tensor(sparse_io(), caps, profile, objective::latency).overrides,
            ferry::choose_per_tensor(sparse_io(), caps, &*profile, objective::latency).overrides);
  EXPECT_TRUE(ferry::choose_per_tensor(sparse_io(), caps, std::nullopt, objective::latency).overrides.empty());
}

}  // namespace
