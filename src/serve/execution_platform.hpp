// Where models run: the GPUs found at start, or, without any, the CPU (built-in workloads only,
// through their host references). Decided once, reported once, never changed silently.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ferry/device_caps.hpp"
#include "serve/executor.hpp"
#include "serve/model_config.hpp"

namespace ferry::serve {

struct execution_platform {
  std::vector<device_caps> gpus;  // empty: host reference execution
  std::string no_gpu_reason;      // why there are none ("no CUDA device: ...")
};

// Queries the GPUs; no_device becomes an empty list with its reason.
[[nodiscard]] execution_platform detect_platform();

// The executor of one model on this platform. Throws invalid_argument / unsupported naming the
// problem (a bad engine spec, a model file without a GPU, a signature the server cannot batch).
[[nodiscard]] std::unique_ptr<executor> make_executor(const model_config& config,
                                                      const execution_platform& platform);

}  // namespace ferry::serve
