// Platform classification and strategy availability on synthetic device_caps records: the
// decisions ferry makes from capabilities, checked without a GPU.
#include <gtest/gtest.h>

#include "support/synthetic_caps.hpp"

#include <string>

#include "ferry/device/device_caps.hpp"
#include "ferry/memory/strategy.hpp"

namespace {

using ferry::testing::h200_like;

TEST(PlatformClass, DiscreteWithoutPageableAccessIsDiscretePcie) {
  EXPECT_EQ(ferry::classify(h200_like()), ferry::platform_class::discrete_pcie);
}

TEST(PlatformClass, IntegratedWinsEvenWithPageableAccess) {
  auto caps = h200_like();
  caps.integrated = true;
  caps.pageable_memory_access = true;
  caps.pageable_memory_access_uses_host_page_tables = true;
  EXPECT_EQ(ferry::classify(caps), ferry::platform_class::integrated);
}

TEST(PlatformClass, PageableAccessThroughHostPageTablesIsCoherentAts) {
  auto caps = h200_like();
  caps.pageable_memory_access = true;
  caps.pageable_memory_access_uses_host_page_tables = true;
  EXPECT_EQ(ferry::classify(caps), ferry::platform_class::coherent_ats);
}

TEST(PlatformClass, PageableAccessWithoutHostPageTablesIsCoherentHmm) {
  auto caps = h200_like();
  caps.pageable_memory_access = true;
  caps.pageable_memory_access_uses_host_page_tables = false;
  EXPECT_EQ(ferry::classify(caps), ferry::platform_class::coherent_hmm);
}

TEST(PlatformClass, NamesAreDistinct) {
  EXPECT_EQ(ferry::to_string(ferry::platform_class::discrete_pcie), "discrete-pcie");
  EXPECT_EQ(ferry::to_string(ferry::platform_class::integrated), "integrated");
  EXPECT_EQ(ferry::to_string(ferry::platform_class::coherent_hmm), "coherent-hmm");
  EXPECT_EQ(ferry::to_string(ferry::platform_class::coherent_ats), "coherent-ats");
}

TEST(StrategyAvailability, OnlySystemAndPeerAreRefusedOnTheOneGpuH200Host) {
  const auto caps = h200_like();
  for (const auto k : ferry::all_strategies) {
    const auto reason = ferry::unavailable_reason(k, caps);
    if (k == ferry::strategy_kind::system || ferry::to_string(k) == "peer")
      EXPECT_TRUE(reason.has_value());
    else
      EXPECT_FALSE(reason.has_value()) << ferry::to_string(k) << ": " << reason.value_or("");
  }
}

TEST(StrategyAvailability, SystemNeedsPageableMemoryAccess) {
  auto caps = h200_like();
  const auto reason = ferry::unavailable_reason(ferry::strategy_kind::system, caps);
  ASSERT_TRUE(reason.has_value());
  EXPECT_NE(reason->find("pageableMemoryAccess"), std::string::npos) << *reason;

  caps.pageable_memory_access = true;
  EXPECT_FALSE(ferry::unavailable_reason(ferry::strategy_kind::system, caps).has_value());
}

TEST(StrategyAvailability, MappedNeedsCanMapHostMemory) {
  auto caps = h200_like();
  caps.can_map_host_memory = false;
  for (const auto k : {ferry::strategy_kind::mapped, ferry::strategy_kind::registered_mapped}) {
    const auto reason = ferry::unavailable_reason(k, caps);
    ASSERT_TRUE(reason.has_value()) << ferry::to_string(k);
    EXPECT_NE(reason->find("canMapHostMemory"), std::string::npos) << *reason;
  }
  // Copying from registered memory does not need mapping.
  EXPECT_FALSE(ferry::unavailable_reason(ferry::strategy_kind::registered, caps).has_value());
}

TEST(StrategyAvailability, RegisteredNeedsHostRegisterSupported) {
  auto caps = h200_like();
  caps.host_register_supported = false;
  for (const auto k : {ferry::strategy_kind::registered, ferry::strategy_kind::registered_mapped}) {
    const auto reason = ferry::unavailable_reason(k, caps);
    ASSERT_TRUE(reason.has_value()) << ferry::to_string(k);
    EXPECT_NE(reason->find("hostRegisterSupported"), std::string::npos) << *reason;
  }
  EXPECT_FALSE(ferry::unavailable_reason(ferry::strategy_kind::mapped, caps).has_value());
}

TEST(StrategyAvailability, ManagedKindsNeedConcurrentManagedAccess) {
  auto caps = h200_like();
  caps.concurrent_managed_access = false;  // as on Jetson
  for (const auto k :
       {ferry::strategy_kind::managed, ferry::strategy_kind::managed_prefetch, ferry::strategy_kind::managed_advise}) {
    const auto reason = ferry::unavailable_reason(k, caps);
    ASSERT_TRUE(reason.has_value()) << ferry::to_string(k);
    EXPECT_NE(reason->find("concurrentManagedAccess"), std::string::npos) << *reason;
  }
}

TEST(StrategyAvailability, CopiesAndDeviceNeedNoCapability) {
  ferry::device_caps nothing;  // every flag false
  for (const auto k : {ferry::strategy_kind::pageable, ferry::strategy_kind::staged, ferry::strategy_kind::pinned,
                       ferry::strategy_kind::device})
    EXPECT_FALSE(ferry::unavailable_reason(k, nothing).has_value()) << ferry::to_string(k);
}

}  // namespace
