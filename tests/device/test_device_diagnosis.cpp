// Why there is no usable GPU, and whether this build has code for the one there is: each cause
// in its own words, from facts given here (as the CUDA calls would report them) rather than from
// this machine's.
#include <gtest/gtest.h>

#include <string>

#include "ferry/device/device_caps.hpp"
#include "ferry/device/device_diagnosis.hpp"

namespace {

// A machine with a working driver for CUDA 13.0 and one GPU; each test takes one thing away.
ferry::cuda_platform_facts working() {
  return {.driver_library = true,
          .device_nodes = true,
          .visible_devices = std::nullopt,
          .driver_cuda_version = 13000,
          .runtime_cuda_version = 13000,
          .device_count = 1,
          .count_failed = false,
          .error_name = {},
          .error_text = {}};
}

ferry::cuda_platform_facts failing(ferry::cuda_platform_facts f, const char* name, const char* text) {
  f.device_count = 0;
  f.count_failed = true;
  f.error_name = name;
  f.error_text = text;
  return f;
}

bool says(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(DeviceDiagnosis, AWorkingGpuNeedsNoExplanation) { EXPECT_EQ(ferry::explain_no_device(working()), ""); }

TEST(DeviceDiagnosis, NoDriverIsNamedNotATooOldOne) {
  // What the runtime says without any driver: cudaErrorInsufficientDriver, which would send a user
  // off to upgrade a driver that is not installed.
  auto f = failing(working(), "cudaErrorInsufficientDriver", "CUDA driver version is insufficient");
  f.driver_library = false;
  f.device_nodes = false;
  f.driver_cuda_version = 0;
  const auto text = ferry::explain_no_device(f);
  EXPECT_EQ(text.rfind("no CUDA device: no NVIDIA driver is installed (libcuda.so.1 cannot be loaded)", 0), 0U) << text;
  EXPECT_TRUE(says(text, "no /dev/nvidia* device node")) << text;
  EXPECT_FALSE(says(text, "insufficient")) << text;
}

TEST(DeviceDiagnosis, ADriverTooOldGivesBothVersions) {
  auto f = failing(working(), "cudaErrorInsufficientDriver", "CUDA driver version is insufficient");
  f.driver_cuda_version = 12080;
  const auto text = ferry::explain_no_device(f);
  EXPECT_TRUE(says(text, "the NVIDIA driver supports CUDA up to 12.8 and this ferry was built with CUDA 13.0")) << text;
  EXPECT_TRUE(says(text, "driver 580 or newer")) << text;
}

TEST(DeviceDiagnosis, ADriverWithoutDeviceNodesIsAModuleOrAContainerProblem) {
  auto f = failing(working(), "cudaErrorNoDevice", "no CUDA-capable device is detected");
  f.device_nodes = false;
  const auto text = ferry::explain_no_device(f);
  EXPECT_TRUE(says(text, "the NVIDIA driver is installed but there is no /dev/nvidia* device node")) << text;
}

TEST(DeviceDiagnosis, GpusHiddenByCudaVisibleDevicesAreNamed) {
  auto f = failing(working(), "cudaErrorNoDevice", "no CUDA-capable device is detected");
  f.visible_devices = "";
  EXPECT_TRUE(says(ferry::explain_no_device(f), "CUDA_VISIBLE_DEVICES='' hides every GPU"));
  f.visible_devices = "7";
  EXPECT_TRUE(says(ferry::explain_no_device(f), "CUDA_VISIBLE_DEVICES='7' hides every GPU"));
}

TEST(DeviceDiagnosis, ZeroGpusAndOtherErrorsSayWhatTheDriverSaid) {
  auto f = working();
  f.device_count = 0;
  EXPECT_EQ(ferry::explain_no_device(f), "no CUDA device: the driver reports 0 GPUs");
  f = failing(working(), "cudaErrorOperatingSystem", "OS call failed");
  EXPECT_EQ(ferry::explain_no_device(f), "no CUDA device: cudaErrorOperatingSystem (OS call failed)");
}

TEST(DeviceDiagnosis, AGpuWithoutCodeNamesBothArchitectures) {
  ferry::device_caps a100;
  a100.ordinal = 1;
  a100.name = "NVIDIA A100-SXM4-80GB";
  a100.compute_major = 8;
  a100.compute_minor = 0;
  EXPECT_FALSE(ferry::missing_code_reason(a100, true, "90-real").has_value());
  const auto why = ferry::missing_code_reason(a100, false, "90-real;90-virtual");
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why,
            "GPU 1 (NVIDIA A100-SXM4-80GB) is sm_80 and this build of ferry has no code for it (built for "
            "90-real;90-virtual): rebuild with -DCMAKE_CUDA_ARCHITECTURES=80, or with the 'native' preset on this "
            "machine");
}

TEST(DeviceDiagnosis, TheBuildNamesItsArchitectures) {
  const std::string built(ferry::built_cuda_architectures());
  EXPECT_FALSE(built.empty());
  EXPECT_NE(built, "unknown");
}

TEST(DeviceDiagnosis, ThisMachinesReasonIsOneLineWhenItHasNoGpu) {
  if (ferry::cuda_device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  const auto text = ferry::no_device_reason();
  EXPECT_EQ(text.rfind("no CUDA device: ", 0), 0U) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
}

}  // namespace
