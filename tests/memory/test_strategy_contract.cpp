// Strategy names, parsing, availability and refusals, on synthetic capability records: none of
// this needs a GPU, so it runs in CI.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "ferry/core/error.hpp"
#include "ferry/memory/buffer.hpp"
#include "ferry/memory/strategy.hpp"
#include "support/synthetic_caps.hpp"

namespace {

using ferry::strategy_kind;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(StrategyNames, EveryStrategyRoundTripsThroughItsName) {
  for (auto k : ferry::all_strategies) EXPECT_EQ(ferry::parse_strategy(ferry::to_string(k)), k);
}

TEST(StrategyNames, DesignTableNamesAreSpelledAsDocumented) {
  EXPECT_EQ(ferry::parse_strategy("managed-prefetch"), strategy_kind::managed_prefetch);
  EXPECT_EQ(ferry::parse_strategy("managed-advise"), strategy_kind::managed_advise);
  EXPECT_EQ(ferry::parse_strategy("registered-mapped"), strategy_kind::registered_mapped);
}

// The registry lists the built-ins first, each at its enumerator, so code naming one still means it.
TEST(StrategyRegistry, BuiltInsSitAtTheirEnumerators) {
  const std::pair<const char*, strategy_kind> built_ins[] = {
      {"pageable", strategy_kind::pageable},
      {"staged", strategy_kind::staged},
      {"pinned", strategy_kind::pinned},
      {"mapped", strategy_kind::mapped},
      {"registered", strategy_kind::registered},
      {"registered-mapped", strategy_kind::registered_mapped},
      {"managed", strategy_kind::managed},
      {"managed-prefetch", strategy_kind::managed_prefetch},
      {"managed-advise", strategy_kind::managed_advise},
      {"system", strategy_kind::system},
      {"device", strategy_kind::device},
  };
  ASSERT_GE(ferry::all_strategies.size(), std::size(built_ins));
  for (std::size_t i = 0; i < std::size(built_ins); ++i) {
    EXPECT_EQ(ferry::all_strategies[i], built_ins[i].second) << built_ins[i].first;
    EXPECT_EQ(ferry::to_string(built_ins[i].second), built_ins[i].first);
  }
}

TEST(StrategyRegistry, NamesAreDistinctAndRead) {
  std::set<std::string_view> names;
  for (auto k : ferry::all_strategies) {
    const std::string_view name = ferry::to_string(k);
    EXPECT_TRUE(names.insert(name).second) << "registered twice: " << name;
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz-"), std::string_view::npos) << name;
  }
}

// A strategy registered after the built-ins has a value and a name but no enumerator: peer.
TEST(StrategyRegistry, PeerIsRegisteredAfterTheBuiltIns) {
  const strategy_kind peer = ferry::parse_strategy("peer");
  EXPECT_GT(static_cast<int>(peer), static_cast<int>(strategy_kind::device));
  const auto all = ferry::parse_strategy_list("all");
  EXPECT_NE(std::find(all.begin(), all.end(), peer), all.end()) << "--strategy all runs peer too";
  EXPECT_EQ(ferry::properties(peer).path, ferry::data_path::resident);
  EXPECT_TRUE(ferry::properties(peer).reads_in_place);
}

TEST(StrategyRegistry, AValueNoStrategyIsRegisteredAtIsNamedAndRefusedAsSuch) {
  const auto nothing = static_cast<strategy_kind>(200);
  EXPECT_EQ(ferry::to_string(nothing), "unregistered");
  EXPECT_EQ(ferry::unavailable_reason(nothing, ferry::testing::h200_like()), "unknown strategy");
  EXPECT_THROW((void)ferry::io_buffer::allocate(nothing, {.bytes = 64}, ferry::testing::h200_like()),
               ferry::invalid_argument);
}

TEST(StrategyNames, UnknownNameListsTheValidOnes) {
  const auto msg = message_of([] { (void)ferry::parse_strategy("pinnned"); });
  EXPECT_NE(msg.find("unknown strategy 'pinnned'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("managed-prefetch"), std::string::npos) << msg;
  EXPECT_THROW((void)ferry::parse_strategy("pinnned"), ferry::invalid_argument);
}

TEST(StrategyNames, ListsParseInOrderWithoutDuplicates) {
  const auto list = ferry::parse_strategy_list("pinned,mapped,pinned");
  ASSERT_EQ(list.size(), 2U);
  EXPECT_EQ(list[0], strategy_kind::pinned);
  EXPECT_EQ(list[1], strategy_kind::mapped);
  EXPECT_EQ(ferry::parse_strategy_list("all").size(), ferry::all_strategies.size());
  EXPECT_THROW((void)ferry::parse_strategy_list("pinned,"), ferry::invalid_argument);
  EXPECT_THROW((void)ferry::parse_strategy_list(",pinned"), ferry::invalid_argument);
  EXPECT_THROW((void)ferry::parse_strategy_list(""), ferry::invalid_argument);
}

TEST(StrategyAvailability, DiscretePcieOfOneGpuOffersAllButSystemAndPeer) {
  const auto caps = ferry::testing::h200_like();
  for (auto k : ferry::all_strategies) {
    const auto reason = ferry::unavailable_reason(k, caps);
    if (k == strategy_kind::system) {
      ASSERT_TRUE(reason.has_value());
      EXPECT_NE(reason->find("pageableMemoryAccess=0"), std::string::npos) << *reason;
    } else if (ferry::to_string(k) == "peer") {
      ASSERT_TRUE(reason.has_value());
      EXPECT_NE(reason->find("one GPU"), std::string::npos) << *reason;
    } else {
      EXPECT_FALSE(reason.has_value()) << ferry::to_string(k) << ": " << *reason;
    }
  }
}

TEST(StrategyAvailability, EachMissingCapabilityRefusesItsStrategies) {
  auto caps = ferry::testing::h200_like();
  caps.can_map_host_memory = false;
  EXPECT_TRUE(ferry::unavailable_reason(strategy_kind::mapped, caps));
  EXPECT_TRUE(ferry::unavailable_reason(strategy_kind::registered_mapped, caps));
  EXPECT_FALSE(ferry::unavailable_reason(strategy_kind::registered, caps));

  caps = ferry::testing::h200_like();
  caps.host_register_supported = false;
  EXPECT_TRUE(ferry::unavailable_reason(strategy_kind::registered, caps));
  EXPECT_TRUE(ferry::unavailable_reason(strategy_kind::registered_mapped, caps));

  caps = ferry::testing::h200_like();
  caps.concurrent_managed_access = false;
  for (auto k : {strategy_kind::managed, strategy_kind::managed_prefetch, strategy_kind::managed_advise}) {
    const auto reason = ferry::unavailable_reason(k, caps);
    ASSERT_TRUE(reason) << ferry::to_string(k);
    EXPECT_NE(reason->find("concurrentManagedAccess=0"), std::string::npos);
  }

  caps = ferry::testing::h200_like();
  caps.pageable_memory_access = true;
  EXPECT_FALSE(ferry::unavailable_reason(strategy_kind::system, caps));
}

TEST(StrategyAvailability, PeerNeedsAnotherGpuItCanReachByPeerAccess) {
  const strategy_kind peer = ferry::parse_strategy("peer");
  auto caps = ferry::testing::h200_like();
  const auto one_gpu = ferry::unavailable_reason(peer, caps);
  ASSERT_TRUE(one_gpu);
  EXPECT_EQ(*one_gpu, "this machine has one GPU, and peer keeps inputs and outputs in another GPU's memory");

  caps.ordinal = 1;
  caps.device_count = 3;  // GPUs 0 and 2 beside it, neither reachable
  const auto unreachable = ferry::unavailable_reason(peer, caps);
  ASSERT_TRUE(unreachable);
  EXPECT_EQ(*unreachable, "GPU 1 cannot access the memory of GPU 0, 2 by peer (cudaDeviceCanAccessPeer=0)");

  caps.peer_ordinals = {2};
  EXPECT_FALSE(ferry::unavailable_reason(peer, caps));
}

TEST(StrategyAvailability, RefusalHappensBeforeAnyCudaCallAndNamesTheDevice) {
  const auto caps = ferry::testing::h200_like();
  const ferry::buffer_request request{.bytes = 4096};
  EXPECT_THROW((void)ferry::io_buffer::allocate(strategy_kind::system, request, caps), ferry::unsupported);
  const auto msg = message_of([&] { (void)ferry::io_buffer::allocate(strategy_kind::system, request, caps); });
  EXPECT_NE(msg.find("strategy 'system' is not available on NVIDIA H200"), std::string::npos) << msg;
}

TEST(BufferRequest, ZeroBytesIsInvalid) {
  EXPECT_THROW((void)ferry::io_buffer::allocate(strategy_kind::pinned, {.bytes = 0}, ferry::testing::h200_like()),
               ferry::invalid_argument);
}

TEST(BufferRequest, WrappingNeedsARegisteredStrategyAndMatchingSize) {
  std::vector<std::byte> memory(8192);
  EXPECT_THROW((void)ferry::io_buffer::wrap_registered(strategy_kind::pinned, memory, {.bytes = 8192},
                                                       ferry::testing::h200_like()),
               ferry::invalid_argument);
  EXPECT_THROW((void)ferry::io_buffer::wrap_registered(strategy_kind::registered, memory, {.bytes = 4096},
                                                       ferry::testing::h200_like()),
               ferry::invalid_argument);
}

TEST(ManagedGuard, RefusesRequestsThatDoNotFitUnlessAllowed) {
  constexpr std::size_t gib = std::size_t{1} << 30;
  EXPECT_FALSE(ferry::managed_request_refusal(gib, 8 * gib, ferry::oversubscription::refuse));
  const auto refusal = ferry::managed_request_refusal(8 * gib, 4 * gib, ferry::oversubscription::refuse);
  ASSERT_TRUE(refusal);
  EXPECT_NE(refusal->find("8.59 GB"), std::string::npos) << *refusal;
  EXPECT_NE(refusal->find("4.29 GB"), std::string::npos) << *refusal;
  // The headroom counts: a request that leaves less than it free is refused too.
  EXPECT_TRUE(ferry::managed_request_refusal(4 * gib - ferry::managed_headroom_bytes + 1, 4 * gib,
                                             ferry::oversubscription::refuse));
  EXPECT_FALSE(ferry::managed_request_refusal(4 * gib - ferry::managed_headroom_bytes, 4 * gib,
                                              ferry::oversubscription::refuse));
  EXPECT_FALSE(ferry::managed_request_refusal(8 * gib, 4 * gib, ferry::oversubscription::allow));
}

TEST(StrategyProperties, PathsMatchTheDesignTable) {
  using ferry::data_path;
  EXPECT_EQ(ferry::properties(strategy_kind::pinned).path, data_path::copy);
  EXPECT_EQ(ferry::properties(strategy_kind::staged).path, data_path::copy);
  EXPECT_EQ(ferry::properties(strategy_kind::mapped).path, data_path::zero_copy);
  EXPECT_EQ(ferry::properties(strategy_kind::system).path, data_path::zero_copy);
  EXPECT_EQ(ferry::properties(strategy_kind::managed_prefetch).path, data_path::migrate);
  EXPECT_EQ(ferry::properties(strategy_kind::device).path, data_path::resident);
  for (auto k : ferry::all_strategies) {
    EXPECT_EQ(ferry::properties(k).uses_managed_memory, ferry::properties(k).path == data_path::migrate);
    EXPECT_FALSE(ferry::properties(k).summary.empty());
  }
  // Where the engine reads inputs in place, over a link: choose costs these by the bytes read.
  for (auto k :
       {strategy_kind::mapped, strategy_kind::registered_mapped, strategy_kind::system, strategy_kind::managed_advise})
    EXPECT_TRUE(ferry::properties(k).reads_in_place) << ferry::to_string(k);
  for (auto k : {strategy_kind::pageable, strategy_kind::staged, strategy_kind::pinned, strategy_kind::registered,
                 strategy_kind::managed, strategy_kind::managed_prefetch, strategy_kind::device})
    EXPECT_FALSE(ferry::properties(k).reads_in_place) << ferry::to_string(k);
}

}  // namespace
