// ferry::choose_per_tensor: the request's pick for most tensors, and a tensor's own where its
// curve says it is clearly cheaper another way, each on its basis with its figures; synthetic profiles
// (tests/support/synthetic_profile.hpp) on the built-in sparse engine's tensors (a large f32 table, a small i32 index
// input, a small f32 output), no GPU needed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ferry/engines/builtin.hpp"
#include "ferry/session/choose.hpp"
#include "support/synthetic_profile.hpp"

namespace {

using ferry::objective;
using ferry::strategy_kind;
using ferry::tensor_basis;
using ferry::tensor_strategy;
using ferry::transfer_use;
namespace t = ferry::testing;

constexpr double tolerance_us = 1e-6;  // the synthetic curves are linear: interpolation is exact but for rounding

// sparse:0.01 over a 16 MiB table: "table" f32 16 MiB, "indices" i32 [41] (164 bytes),
// output "rows" f32 [41].
std::vector<ferry::tensor_spec> sparse_io() {
  return ferry::make_builtin_engine("sparse:0.01", {.input_bytes = std::size_t{16} << 20})->resolve({});
}

// A PCIe GPU where a copy has a clear fixed cost: a mapped read saves 10 us on a tiny input, and
// costs far more than a copy on a large one (20 us + B at 50 GB/s against 10 us + B at 40 GB/s).
ferry::testing::cost copy_has_a_fixed_cost(strategy_kind k, transfer_use use) {
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
  EXPECT_EQ(c.request.basis, ferry::choice_basis::profile);
  EXPECT_EQ(c.request.strategy, strategy_kind::pinned);  // the request is 16 MiB in: copied
  EXPECT_EQ(c.request.inflight, 3);                      // the profile's depth, for throughput
  // The request's pick is choose()'s for the whole request.
  const auto whole = ferry::choose({.input_bytes = (std::size_t{16} << 20) + 164, .output_bytes = 164}, caps, &profile,
                                   objective::throughput);
  EXPECT_EQ(c.request.strategy, whole.strategy);
  EXPECT_DOUBLE_EQ(c.request.estimated_us, whole.estimated_us);
  EXPECT_EQ(c.overrides, (std::vector<tensor_strategy>{{"indices", strategy_kind::mapped}}));
  ASSERT_EQ(c.tensors.size(), 3U);

  // The indices, costed at the curves' smallest size: mapped's fixed cost is half of pinned's.
  const auto& indices = pick_of(c, "indices");
  const double mapped_us = copy_has_a_fixed_cost(strategy_kind::mapped, transfer_use::input_once).at(64 << 10);
  const double pinned_us = copy_has_a_fixed_cost(strategy_kind::pinned, transfer_use::input_once).at(64 << 10);
  EXPECT_EQ(indices.basis, tensor_basis::override_saves_enough);
  EXPECT_EQ(indices.strategy, strategy_kind::mapped);
  EXPECT_EQ(indices.request_strategy, strategy_kind::pinned);
  EXPECT_NEAR(indices.estimated_us, mapped_us, tolerance_us);
  EXPECT_NEAR(indices.request_strategy_us, pinned_us, tolerance_us);
  ASSERT_TRUE(indices.cheaper.has_value());
  EXPECT_EQ(indices.cheaper->strategy, strategy_kind::mapped);
  EXPECT_NEAR(indices.saving_us, pinned_us - mapped_us, tolerance_us);
  EXPECT_NEAR(indices.saving_fraction, (pinned_us - mapped_us) / pinned_us, 1e-9);
  EXPECT_GE(indices.saving_us, ferry::tensor_override_min_us);
  EXPECT_GE(indices.saving_fraction, ferry::tensor_override_min_fraction);

  // The output costs what it adds to a request: nothing under most strategies of this model, so
  // the request's pick costs as little as any; managed-prefetch's output curve costs more.
  const auto& rows = pick_of(c, "rows");
  EXPECT_EQ(rows.basis, tensor_basis::request_pick_cheapest);
  EXPECT_EQ(rows.strategy, strategy_kind::pinned);
  EXPECT_EQ(rows.role, ferry::tensor_role::output);
  EXPECT_NEAR(rows.request_strategy_us, 0.0, tolerance_us);
  ASSERT_TRUE(rows.next_costlier.has_value());
  EXPECT_EQ(rows.next_costlier->strategy, strategy_kind::managed_prefetch);
  EXPECT_FALSE(rows.cheaper.has_value());

  // The table: copied by the request's pick, registered's one more fixed microsecond next.
  const auto& table = pick_of(c, "table");
  EXPECT_EQ(table.basis, tensor_basis::request_pick_cheapest);
  EXPECT_EQ(table.strategy, strategy_kind::pinned);
  EXPECT_EQ(table.bytes, std::size_t{16} << 20);
  ASSERT_TRUE(table.next_costlier.has_value());
  EXPECT_EQ(table.next_costlier->strategy, strategy_kind::registered);
  EXPECT_GT(table.next_costlier->us, table.estimated_us);
}

TEST(ChoosePerTensor, WithoutAProfileEveryTensorGoesByTheRules) {
  const auto io = sparse_io();
  for (const auto& caps : {t::discrete_pcie_caps(), t::integrated_caps(), t::ats_caps()}) {
    const auto c = ferry::choose_per_tensor(io, caps, nullptr, objective::latency);
    const auto rules = ferry::choose({.input_bytes = (std::size_t{16} << 20) + 164, .output_bytes = 164}, caps, nullptr,
                                     objective::latency);
    EXPECT_EQ(c.request.basis, ferry::choice_basis::rules_without_profile);
    EXPECT_EQ(c.request.strategy, rules.strategy) << caps.name;
    EXPECT_EQ(c.request.inflight, rules.inflight);
    EXPECT_TRUE(c.overrides.empty());
    ASSERT_EQ(c.tensors.size(), 3U);
    for (std::size_t i = 0; i < io.size(); ++i) {
      const auto& p = c.tensors[i];
      EXPECT_EQ(p.tensor, io[i].name);
      EXPECT_EQ(p.basis, tensor_basis::request_not_measured);
      EXPECT_EQ(p.strategy, rules.strategy);
      EXPECT_EQ(p.request_strategy, rules.strategy);
      EXPECT_EQ(p.estimated_us, 0.0);
      EXPECT_EQ(p.request_strategy_us, 0.0);
    }
  }
}

TEST(ChoosePerTensor, AGainUnderTheMarginsKeepsTheRequestsPick) {
  // Reading a tiny input in place saves 1 us of pinned's fixed 20 us (at the profile's smallest
  // size, 64 KiB, which is what smaller tensors are costed at): under 2 us.
  const auto caps = t::discrete_pcie_caps();
  const auto profile = t::synthetic_profile(caps, [](strategy_kind k, transfer_use use) {
    if (k == strategy_kind::mapped || k == strategy_kind::managed_advise) return t::cost{19, 48};
    return t::discrete_model(k, use);
  });
  const auto c = ferry::choose_per_tensor(sparse_io(), caps, &profile, objective::latency);
  EXPECT_EQ(c.request.strategy, strategy_kind::pinned);
  EXPECT_TRUE(c.overrides.empty());
  const auto& indices = pick_of(c, "indices");
  EXPECT_EQ(indices.basis, tensor_basis::saving_under_margins);
  EXPECT_EQ(indices.strategy, strategy_kind::pinned);
  ASSERT_TRUE(indices.cheaper.has_value());
  EXPECT_EQ(indices.cheaper->strategy, strategy_kind::mapped);
  const double pinned_us = t::discrete_model(strategy_kind::pinned, transfer_use::input_once).at(64 << 10);
  const double mapped_us = t::cost{19, 48}.at(64 << 10);
  EXPECT_NEAR(indices.saving_us, pinned_us - mapped_us, tolerance_us);
  EXPECT_LT(indices.saving_us, ferry::tensor_override_min_us);
  EXPECT_GE(indices.saving_fraction, ferry::tensor_override_min_fraction);  // the microseconds decided
  EXPECT_DOUBLE_EQ(indices.estimated_us, indices.request_strategy_us);      // its estimate is the kept one

  // 16 MB in and 16 MB out: registered reads a little faster than pinned (3 us, 1%), but writes
  // outputs slower, so the request's pick is pinned, and the input keeps it: under 3%.
  const auto even = t::synthetic_profile(caps, [](strategy_kind k, transfer_use use) {
    if (k == strategy_kind::registered) return use == transfer_use::output ? t::cost{20, 45} : t::cost{20, 50.5};
    return t::discrete_model(k, use);
  });
  const std::vector<ferry::tensor_spec> io{
      {.name = "a", .type = ferry::dtype::f32, .shape = {4'000'000}, .role = ferry::tensor_role::input},
      {.name = "b", .type = ferry::dtype::f32, .shape = {4'000'000}, .role = ferry::tensor_role::output}};
  const auto big = ferry::choose_per_tensor(io, caps, &even, objective::latency);
  EXPECT_EQ(big.request.strategy, strategy_kind::pinned);
  EXPECT_TRUE(big.overrides.empty());
  const auto& a = pick_of(big, "a");
  EXPECT_EQ(a.basis, tensor_basis::saving_under_margins);
  ASSERT_TRUE(a.cheaper.has_value());
  EXPECT_EQ(a.cheaper->strategy, strategy_kind::registered);
  EXPECT_GE(a.saving_us, ferry::tensor_override_min_us);
  EXPECT_LT(a.saving_fraction, ferry::tensor_override_min_fraction);  // the share decided
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
  ASSERT_EQ(c.request.basis, ferry::choice_basis::profile);
  for (const auto& p : c.tensors) {
    EXPECT_FALSE(ferry::unavailable_reason(p.strategy, caps).has_value()) << p.tensor << ": " << ferry::describe(p);
    EXPECT_NE(p.strategy, strategy_kind::device) << ferry::describe(p);
  }
  // mapped recorded as refused on the capable device: not picked either.
  for (auto& curve : profile.curves)
    if (curve.strategy == strategy_kind::mapped) {
      curve.refused = "refused in this test";
      curve.points.clear();
    }
  c = ferry::choose_per_tensor(sparse_io(), capable, &profile, objective::latency);
  for (const auto& p : c.tensors) {
    EXPECT_NE(p.strategy, strategy_kind::mapped) << ferry::describe(p);
    EXPECT_NE(p.strategy, strategy_kind::device) << ferry::describe(p);
  }
}

TEST(ChoosePerTensor, ADynamicTensorGoesByTheRequestsPickAndNothingThrows) {
  const auto caps = t::discrete_pcie_caps();
  const auto profile = t::synthetic_profile(caps, copy_has_a_fixed_cost);
  auto io = sparse_io();
  io[1].shape = {ferry::dynamic_dim};
  const auto c = ferry::choose_per_tensor(io, caps, &profile, objective::latency);
  EXPECT_TRUE(c.overrides.empty());
  const auto& indices = pick_of(c, "indices");
  EXPECT_EQ(indices.basis, tensor_basis::dynamic_shape);
  EXPECT_EQ(indices.bytes, 0U);
  EXPECT_EQ(indices.strategy, c.request.strategy);
  EXPECT_EQ(pick_of(c, "table").basis, tensor_basis::request_pick_cheapest);  // the others are still costed
  EXPECT_TRUE(ferry::choose_per_tensor({}, caps, &profile, objective::latency).tensors.empty());
}

TEST(ChoosePerTensor, TheOptionalOverloadIsTheSame) {
  const auto caps = t::discrete_pcie_caps();
  const std::optional<ferry::device_profile> profile = t::synthetic_profile(caps, copy_has_a_fixed_cost);
  EXPECT_EQ(ferry::choose_per_tensor(sparse_io(), caps, profile, objective::latency).overrides,
            ferry::choose_per_tensor(sparse_io(), caps, &*profile, objective::latency).overrides);
  EXPECT_TRUE(ferry::choose_per_tensor(sparse_io(), caps, std::nullopt, objective::latency).overrides.empty());
}

// The sentences users see (serve's auto log, tensor by tensor), one per basis.
TEST(TensorPickText, EachBasisHasItsSentence) {
  const auto caps = t::discrete_pcie_caps();
  const auto profile = t::synthetic_profile(caps, copy_has_a_fixed_cost);
  const auto c = ferry::choose_per_tensor(sparse_io(), caps, &profile, objective::throughput);
  EXPECT_EQ(ferry::describe(pick_of(c, "indices")),
            "'indices' (input, 164 B): mapped, 11.6 us against 21.3 us by the request's pick pinned (saves 9.7 us, "
            "45%)");
  EXPECT_EQ(ferry::describe(pick_of(c, "table")),
            "'table' (input, 16.8 MB): pinned, the request's pick, costs as little as any: 355.5 us, next "
            "registered 357.5 us");

  const auto narrow = t::synthetic_profile(caps, [](strategy_kind k, transfer_use use) {
    if (k == strategy_kind::mapped || k == strategy_kind::managed_advise) return t::cost{19, 48};
    return t::discrete_model(k, use);
  });
  EXPECT_EQ(
      ferry::describe(pick_of(ferry::choose_per_tensor(sparse_io(), caps, &narrow, objective::latency), "indices")),
      "'indices' (input, 164 B): pinned, the request's pick, 21.3 us; mapped would save 0.9 us (4.4%), under "
      "the 2 us and 3% a second strategy must save");

  EXPECT_EQ(ferry::describe(pick_of(ferry::choose_per_tensor(sparse_io(), caps, nullptr, objective::latency), "rows")),
            "'rows' (output, 164 B): pinned, the request's pick (not measured on this machine, so no tensor is "
            "costed on its own)");
  auto dynamic = sparse_io();
  dynamic[1].shape = {ferry::dynamic_dim};
  EXPECT_EQ(ferry::describe(pick_of(ferry::choose_per_tensor(dynamic, caps, &profile, objective::latency), "indices")),
            "'indices' (input, dynamic shape): pinned, the request's pick (its size is not known while a dimension "
            "is dynamic)");
  // A profile that costs the request always costs its tensors by the same curves: this basis is
  // the policy's guard, so its sentence is checked on a pick made by hand.
  ferry::tensor_pick uncosted;
  uncosted.tensor = "x";
  uncosted.bytes = 4000;
  uncosted.basis = tensor_basis::no_curve;
  uncosted.strategy = uncosted.request_strategy = strategy_kind::staged;
  EXPECT_EQ(ferry::describe(uncosted),
            "'x' (input, 4 KB): staged, the request's pick (the profile has no curve to cost this tensor by)");
}

}  // namespace
