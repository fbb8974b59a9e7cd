// The pure parts of the GPU clock record: reason names and the summary of samples.
#include <gtest/gtest.h>

#include "ferry/device/gpu_clocks.hpp"

TEST(GpuClocks, ReasonBitsHaveNamesAndIdleIsNotOne) {
  EXPECT_TRUE(ferry::throttle_reason_names(0x1).empty());  // idle between requests is expected
  EXPECT_EQ(ferry::throttle_reason_names(0x4 | 0x40),
            (std::vector<std::string>{"sw-power-cap", "hw-thermal-slowdown"}));
  EXPECT_TRUE(ferry::throttle_reason_names(0).empty());
}

TEST(GpuClocks, SteadyClocksAreNoChange) {
  const std::vector<ferry::clock_sample> steady(5, ferry::clock_sample{1980, 3201, 0x1});
  const auto r = ferry::summarize_clocks(steady);
  EXPECT_EQ(r.samples, 5u);
  EXPECT_EQ(r.sm_mhz_min, 1980u);
  EXPECT_EQ(r.sm_mhz_max, 1980u);
  EXPECT_FALSE(r.changed);
}

TEST(GpuClocks, AMovingClockOrAThrottleIsAChange) {
  const auto moved = ferry::summarize_clocks({{1980, 3201, 0}, {1755, 3201, 0}});
  EXPECT_TRUE(moved.changed);
  EXPECT_EQ(moved.sm_mhz_min, 1755u);
  EXPECT_EQ(moved.sm_mhz_max, 1980u);
  const auto throttled = ferry::summarize_clocks({{1980, 3201, 0}, {1980, 3201, 0x4}});
  EXPECT_TRUE(throttled.changed);
  EXPECT_EQ(throttled.throttle_reasons, (std::vector<std::string>{"sw-power-cap"}));
  EXPECT_FALSE(ferry::summarize_clocks({}).changed);
}
