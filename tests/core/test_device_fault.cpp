// A lost GPU context (ferry/core/device_fault.hpp): which CUDA errors are sticky, that the first fault
// is kept once, and that cleanup stops calling CUDA afterwards. A fault is process-wide and
// permanent, so each case that notes one runs in a child process (a gtest death test).
#include <gtest/gtest.h>

#include <cstdlib>

#include "ferry/core/device_fault.hpp"
#include "ferry/core/error.hpp"

namespace {

TEST(DeviceFault, StickyErrorsAreTheOnesThatLoseTheContext) {
  for (const cudaError_t code : {cudaErrorAssert, cudaErrorIllegalAddress, cudaErrorLaunchFailure,
                                 cudaErrorIllegalInstruction, cudaErrorMisalignedAddress, cudaErrorECCUncorrectable})
    EXPECT_TRUE(ferry::is_sticky(code)) << cudaGetErrorName(code);
  for (const cudaError_t code : {cudaSuccess, cudaErrorMemoryAllocation, cudaErrorInvalidValue, cudaErrorNoDevice,
                                 cudaErrorInsufficientDriver, cudaErrorNotReady})
    EXPECT_FALSE(ferry::is_sticky(code)) << cudaGetErrorName(code);
}

TEST(DeviceFault, NoFaultUntilOneIsNoted) {
  EXPECT_FALSE(ferry::device_faulted());
  EXPECT_FALSE(ferry::first_device_fault().has_value());
}

TEST(DeviceFaultDeathTest, AStickyErrorIsThrownAsADeviceFaultAndNotedOnce) {
  const auto fault = [] {
    try {
      FERRY_CUDA_TRY(cudaErrorAssert);
    } catch (const ferry::device_fault& e) {
      const auto first = ferry::first_device_fault();
      const bool kept = ferry::device_faulted() && first && first->code == cudaErrorAssert && first->what == e.what();
      const bool later_ignored =
          !ferry::note_device_fault({.ordinal = 0, .code = cudaErrorIllegalAddress, .what = "later"}) &&
          ferry::first_device_fault()->what == e.what();
      std::exit(kept && later_ignored ? 0 : 1);
    }
    std::exit(2);
  };
  EXPECT_EXIT(fault(), ::testing::ExitedWithCode(0), "");
}

TEST(DeviceFaultDeathTest, CleanupMakesNoCudaCallOnceTheContextIsLost) {
  const auto cleanup = [] {
    int calls = 0;
    const auto call = [&calls] {
      ++calls;
      return cudaErrorInvalidValue;
    };
    FERRY_CUDA_TRY_NOTHROW(call());  // made, and logged
    (void)ferry::note_device_fault({.ordinal = 0, .code = cudaErrorAssert, .what = "device-side assert"});
    FERRY_CUDA_TRY_NOTHROW(call());  // skipped
    std::exit(calls == 1 ? 0 : 1);
  };
  EXPECT_EXIT(cleanup(), ::testing::ExitedWithCode(0), "");
}

TEST(DeviceFaultDeathTest, AStickyErrorInCleanupIsNotedNotPrinted) {
  const auto cleanup = [] {
    FERRY_CUDA_TRY_NOTHROW(cudaErrorIllegalAddress);
    std::exit(ferry::device_faulted() ? 0 : 1);
  };
  EXPECT_EXIT(cleanup(), ::testing::ExitedWithCode(0), "^$");
}

}  // namespace
