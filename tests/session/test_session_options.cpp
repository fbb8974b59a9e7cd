// What a session checks of its options before it makes anything (check_session_options), pure and
// so tested without a GPU: tensor_strategies names each tensor of the engine once, and every
// strategy some tensor goes by is available, the refusal naming the tensors that asked for it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ferry/core/error.hpp"
#include "ferry/engines/builtin.hpp"
#include "ferry/session/session.hpp"
#include "support/synthetic_caps.hpp"

namespace {

using ferry::session_options;
using ferry::strategy_kind;

std::vector<ferry::tensor_spec> sparse_io() {
  return ferry::make_builtin_engine("sparse:0.01", {.input_bytes = std::size_t{1} << 20})->resolve({});
}

template <class Error>
std::string refusal(const session_options& options, const ferry::device_caps& caps = ferry::testing::h200_like()) {
  try {
    ferry::check_session_options(sparse_io(), options, caps);
  } catch (const Error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(SessionOptions, EachTensorMayGoItsOwnWay) {
  const session_options options{
      .strategy = strategy_kind::pinned,
      .tensor_strategies = {{"indices", strategy_kind::mapped}, {"rows", strategy_kind::managed_advise}}};
  EXPECT_NO_THROW(ferry::check_session_options(sparse_io(), options, ferry::testing::h200_like()));
  EXPECT_EQ(ferry::strategy_for(options, "table"), strategy_kind::pinned);
  EXPECT_EQ(ferry::strategy_for(options, "indices"), strategy_kind::mapped);
  EXPECT_EQ(ferry::strategy_for(options, "rows"), strategy_kind::managed_advise);
}

TEST(SessionOptions, AnUnknownTensorIsRefusedNamingItAndTheKnownOnes) {
  const std::string why = refusal<ferry::invalid_argument>({.tensor_strategies = {{"indexes", strategy_kind::mapped}}});
  EXPECT_EQ(why,
            "tensor_strategies names 'indexes', which is not a tensor of the engine; its tensors are: table (input), "
            "indices (input), rows (output)");
}

TEST(SessionOptions, ATensorNamedTwiceIsRefused) {
  const std::string why = refusal<ferry::invalid_argument>(
      {.tensor_strategies = {{"indices", strategy_kind::mapped}, {"indices", strategy_kind::pinned}}});
  EXPECT_EQ(why, "tensor_strategies names 'indices' twice ('mapped' and 'pinned'); name each tensor once");
}

TEST(SessionOptions, AnUnavailableStrategyIsRefusedNamingTheTensorsThatUseIt) {
  // No HMM/ATS on the H200 host: `system` is unavailable, for the one tensor that asks for it.
  const std::string for_one = refusal<ferry::unsupported>(
      {.strategy = strategy_kind::pinned, .tensor_strategies = {{"indices", strategy_kind::system}}});
  EXPECT_EQ(for_one.rfind("strategy 'system' (for 'indices') is not available on NVIDIA H200: ", 0), 0U) << for_one;
  // The default is checked for the tensors that go by it.
  const std::string for_default = refusal<ferry::unsupported>(
      {.strategy = strategy_kind::system, .tensor_strategies = {{"indices", strategy_kind::mapped}}});
  EXPECT_EQ(for_default.rfind("strategy 'system' (for 'table', 'rows') is not available", 0), 0U) << for_default;
  // A default no tensor goes by is not used, so not refused.
  EXPECT_EQ(refusal<ferry::unsupported>({.strategy = strategy_kind::system,
                                         .tensor_strategies = {{"table", strategy_kind::pinned},
                                                               {"indices", strategy_kind::mapped},
                                                               {"rows", strategy_kind::pinned}}}),
            "accepted");
  // Orin-like: no host registration, so `registered` is refused for the output that asks for it.
  const std::string registered = refusal<ferry::unsupported>(
      {.strategy = strategy_kind::mapped, .tensor_strategies = {{"rows", strategy_kind::registered}}},
      ferry::testing::orin_like());
  EXPECT_EQ(registered.rfind("strategy 'registered' (for 'rows') is not available on Orin", 0), 0U) << registered;
}

TEST(SessionOptions, InflightIsAtLeastOne) {
  EXPECT_EQ(refusal<ferry::invalid_argument>({.inflight = 0}), "inflight must be at least 1");
}

TEST(SessionOptions, BraceInitialisersThatStopEarlierStillWork) {
  const session_options positional{strategy_kind::device, 1, ferry::graph_mode::off, ferry::oversubscription::refuse};
  EXPECT_TRUE(positional.tensor_strategies.empty());
  EXPECT_EQ(ferry::strategy_for(positional, "anything"), strategy_kind::device);
}

}  // namespace
