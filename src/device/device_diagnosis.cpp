#include "ferry/device/device_diagnosis.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "ferry/core/error.hpp"

#ifndef FERRY_CUDA_ARCHITECTURES
#error "FERRY_CUDA_ARCHITECTURES comes from the build (CMake)"
#endif

namespace ferry {
namespace {

std::string version_text(int cuda_version) {
  return fmt::format("{}.{}", cuda_version / 1000, (cuda_version % 1000) / 10);
}

bool nvidia_device_nodes() {
  std::error_code ec;
  if (std::filesystem::exists("/dev/nvidiactl", ec)) return true;
  for (std::filesystem::directory_iterator it("/dev", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > 6 && name.starts_with("nvidia") && name.find_first_not_of("0123456789", 6) == std::string::npos)
      return true;
  }
  return false;
}

}  // namespace

cuda_platform_facts gather_cuda_platform_facts() {
  cuda_platform_facts facts;
  // The runtime loads the same library; asking first tells "no driver" from "driver too old".
  if (void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL); driver != nullptr) {
    facts.driver_library = true;
    dlclose(driver);
  }
  facts.device_nodes = nvidia_device_nodes();
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible != nullptr) facts.visible_devices = visible;
  if (cudaDriverGetVersion(&facts.driver_cuda_version) != cudaSuccess) facts.driver_cuda_version = 0;
  if (cudaRuntimeGetVersion(&facts.runtime_cuda_version) != cudaSuccess) facts.runtime_cuda_version = 0;
  const cudaError_t status = cudaGetDeviceCount(&facts.device_count);
  (void)cudaGetLastError();
  if (status != cudaSuccess) {
    facts.count_failed = true;
    facts.device_count = 0;
    facts.error_name = cudaGetErrorName(status);
    facts.error_text = cudaGetErrorString(status);
  }
  return facts;
}

std::string explain_no_device(const cuda_platform_facts& f) {
  if (!f.count_failed && f.device_count > 0) return {};
  const std::string prefix = "no CUDA device: ";
  if (!f.driver_library)
    return prefix + "no NVIDIA driver is installed (libcuda.so.1 cannot be loaded)" +
           (f.device_nodes ? "" : " and there is no /dev/nvidia* device node") +
           "; in a container, start it with the GPU (e.g. docker run --gpus all)";
  if (f.driver_cuda_version > 0 && f.runtime_cuda_version > f.driver_cuda_version)
    return prefix + fmt::format(
                        "the NVIDIA driver supports CUDA up to {} and this ferry was built with CUDA {}: "
                        "install a newer driver (CUDA 13.0 needs driver 580 or newer)",
                        version_text(f.driver_cuda_version), version_text(f.runtime_cuda_version));
  if (!f.device_nodes)
    return prefix +
           "the NVIDIA driver is installed but there is no /dev/nvidia* device node: its kernel module "
           "is not loaded, or this container was started without the GPU";
  if (f.visible_devices)
    return prefix + fmt::format(
                        "CUDA_VISIBLE_DEVICES='{}' hides every GPU of this machine (unset it, or name a GPU "
                        "that exists)",
                        *f.visible_devices);
  if (!f.count_failed) return prefix + "the driver reports 0 GPUs";
  return prefix + f.error_name + " (" + f.error_text + ")";
}

std::string_view built_cuda_architectures() noexcept { return FERRY_CUDA_ARCHITECTURES; }

std::optional<std::string> missing_code_reason(const device_caps& caps, bool has_code, std::string_view built) {
  if (has_code) return std::nullopt;
  return fmt::format(
      "GPU {} ({}) is sm_{}{} and this build of ferry has no code for it (built for {}): rebuild "
      "with -DCMAKE_CUDA_ARCHITECTURES={}{}, or with the 'native' preset on this machine",
      caps.ordinal, caps.name, caps.compute_major, caps.compute_minor, built, caps.compute_major, caps.compute_minor);
}

void require_code_for(const device_caps& caps) {
  if (auto why = missing_code_reason(caps, ferry_has_code_for(caps.ordinal))) throw unsupported(*why);
}

}  // namespace ferry
