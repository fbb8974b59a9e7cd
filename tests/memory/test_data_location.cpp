// Which GPU holds a request's data (data_location.hpp), from synthetic pointer facts.
#include <gtest/gtest.h>

#include "ferry/memory/data_location.hpp"

namespace {

using ferry::gpu_holding;
using ferry::pointer_facts;
using kind = ferry::pointer_facts::kind;

constexpr int cpu = -1;   // cudaCpuDeviceId
constexpr int none = -2;  // cudaInvalidDeviceId: never prefetched, or mixed

TEST(DataLocation, HostMemoryIsOnNoGpu) {
  EXPECT_FALSE(gpu_holding(pointer_facts{kind::host, -1, none, none}).has_value());
}

TEST(DataLocation, DeviceMemoryIsOnItsGpu) {
  EXPECT_EQ(gpu_holding(pointer_facts{kind::device, 1, none, none}), 1);
  EXPECT_EQ(gpu_holding(pointer_facts{kind::device, 0, none, none}), 0);
  EXPECT_FALSE(gpu_holding(pointer_facts{kind::device, -1, none, none}).has_value());
}

TEST(DataLocation, ManagedPagesAreWhereTheyWereLastPrefetched) {
  EXPECT_EQ(gpu_holding(pointer_facts{kind::managed, -1, 1, none}), 1);
  // An explicit prefetch beats a preference.
  EXPECT_EQ(gpu_holding(pointer_facts{kind::managed, -1, 1, 0}), 1);
  // Sent back to the CPU last: on no GPU, whatever they prefer.
  EXPECT_FALSE(gpu_holding(pointer_facts{kind::managed, -1, cpu, 1}).has_value());
}

TEST(DataLocation, UnprefetchedManagedPagesFollowTheirPreference) {
  EXPECT_EQ(gpu_holding(pointer_facts{kind::managed, -1, none, 1}), 1);
  EXPECT_FALSE(gpu_holding(pointer_facts{kind::managed, -1, none, cpu}).has_value());
  EXPECT_FALSE(gpu_holding(pointer_facts{kind::managed, -1, none, none}).has_value());
}

}  // namespace
