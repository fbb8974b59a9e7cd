// Where models run: the GPUs chosen at start (`ferry serve --devices`, every GPU by default),
// or, without any, the CPU (built-in workloads only, through their host references). Decided
// once, reported once, never changed silently.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/device/device_caps.hpp"
#include "ferry/memory/profile.hpp"
#include "serve/config/model_config.hpp"
#include "serve/execution/executor.hpp"

namespace ferry::serve {

struct execution_platform {
  std::vector<device_caps> gpus;  // the GPUs models run on; empty: host reference execution
  int device_count = 0;           // GPUs of the machine (clients' CUDA regions may be on any)
  std::string no_gpu_reason;      // why there are none ("no CUDA device: ...")
  // Each GPU's profile (ferry calibrate), looked up at start (lookup_profiles); models
  // configured with "auto" are chosen from the first.
  std::vector<profile_lookup> profiles;
  bool profile_named = false;  // the first GPU's came from `ferry serve --profile`
  // Where model files' backends are looked for (ferry/engines/backend.hpp; `--backend-directory` first).
  std::vector<std::filesystem::path> backend_directories;
};

// Each GPU's profile: the first GPU's from `named` when it is given (`ferry serve --profile`), every
// other one's (and the first's without `named`) from its default file in the cache folder. Never
// throws: a missing, stale or corrupt file comes back as such, with its message.
[[nodiscard]] std::vector<profile_lookup> lookup_profiles(const std::vector<device_caps>& gpus,
                                                          const std::filesystem::path& named = {});

// The GPUs `--devices TEXT` chooses of the machine's `device_count`, as parse_device_set reads
// them (same syntax and errors as ferry bench), except that the default "all" on a machine
// without a GPU chooses none: the server then runs on the CPU. Any other text without a GPU
// throws no_device, as ferry bench does, rather than serving on the CPU what asked for GPUs.
[[nodiscard]] std::vector<int> serve_devices(std::string_view text, int device_count);

// Queries the GPUs `devices` chooses (serve_devices); none becomes an empty list with its reason.
// `profile`: the first GPU's profile file (lookup_profiles); empty: the cache folder's.
// `backend_directory`: the folder searched first for backends (`--backend-directory`).
[[nodiscard]] execution_platform detect_platform(std::string_view devices = "all",
                                                 const std::filesystem::path& profile = {},
                                                 const std::filesystem::path& backend_directory = {});

// The executor of one model on this platform. Throws invalid_argument / unsupported naming the
// problem (a bad engine spec, a missing or broken backend, a model file whose backend cannot
// compute on the CPU on a server without a GPU, a signature the server cannot batch).
[[nodiscard]] std::unique_ptr<executor> make_executor(const model_config& config, const execution_platform& platform);

}  // namespace ferry::serve
