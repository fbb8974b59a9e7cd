// Entry point of the gpu-labelled tests: without a usable GPU every test is skipped, and the
// reason ("no CUDA device: ...") is printed once per test so ctest's output says why.
#include <gtest/gtest.h>

#include "ferry/device/device_caps.hpp"

namespace {

class gpu_environment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (ferry::cuda_device_count() == 0) GTEST_SKIP() << ferry::no_device_reason();
  }
};
}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new gpu_environment);  // gtest takes ownership
  return RUN_ALL_TESTS();
}
