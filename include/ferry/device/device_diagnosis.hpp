// Why a machine has no usable GPU, and whether this build of ferry has code for the one it has:
// each in one line that names the real cause (no driver, no device node, a driver too old, GPUs
// hidden by CUDA_VISIBLE_DEVICES, a GPU architecture the build left out), so the user fixes the
// right thing. The facts are gathered once; turning them into words is pure, so every case is
// tested without a GPU.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ferry/device/device_caps.hpp"

namespace ferry {

struct cuda_platform_facts {
  bool driver_library = false;                 // libcuda.so.1 loads
  bool device_nodes = false;                   // /dev/nvidiactl or /dev/nvidia<N> exists
  std::optional<std::string> visible_devices;  // CUDA_VISIBLE_DEVICES, when set
  int driver_cuda_version = 0;                 // cudaDriverGetVersion: 13000 for 13.0; 0 without a driver
  int runtime_cuda_version = 0;                // the CUDA runtime this build runs on
  int device_count = 0;
  bool count_failed = false;           // cudaGetDeviceCount returned an error
  std::string error_name, error_text;  // that error's name and text
};

[[nodiscard]] cuda_platform_facts gather_cuda_platform_facts();

// "no CUDA device: <the cause>", or empty when there is a usable GPU.
[[nodiscard]] std::string explain_no_device(const cuda_platform_facts& facts);

// The architectures this build has device code for, as CMake was told (CMAKE_CUDA_ARCHITECTURES).
[[nodiscard]] std::string_view built_cuda_architectures() noexcept;

// Why this build cannot run its kernels on `caps`'s GPU, naming both architectures, or nothing.
// `has_code` is what the runtime says (ferry_has_code_for, below); pure otherwise.
[[nodiscard]] std::optional<std::string> missing_code_reason(const device_caps& caps, bool has_code,
                                                             std::string_view built = built_cuda_architectures());

// Whether the CUDA runtime finds code of this build (machine code or PTX it can compile) for
// the GPU `ordinal`.
[[nodiscard]] bool ferry_has_code_for(int ordinal);

// Throws unsupported with missing_code_reason's line when the GPU of `caps` cannot run ferry's
// kernels; sessions and the CLI call it before anything runs there.
void require_code_for(const device_caps& caps);

}  // namespace ferry
