// What a model may take when it loads, checked before anything is made. A config is a request
// for resources written by whoever can write to the repository: "instances_per_gpu": 64 with
// "inflight": 64 asked for 4,096 worker threads, "mlp:64x16384" for 32 GiB of weights. So a
// model's threads are bounded, alone and with every other model's, and what it would allocate
// (its weights, its sessions' buffers) must fit the memory there is now, on the host and on each
// GPU; past a limit the model is unavailable, with the figures in its reason, and nothing of it
// was made.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "ferry/device/device_caps.hpp"
#include "serve/config/model_config.hpp"

namespace ferry::serve {

struct load_limits {
  std::size_t max_model_threads = 256;   // one model's workers and its deadline thread
  std::size_t max_total_threads = 1024;  // every loaded model's, together
};

// The threads a model of `config` runs: instances_per_gpu x inflight workers on each of `gpus`
// GPUs (on the CPU when there are none), and its scheduler's deadline thread.
[[nodiscard]] std::size_t model_threads(const model_config& config, std::size_t gpus) noexcept;

// Throws invalid_argument naming the figures when `threads` exceed max_model_threads, or
// `threads` and the `others` the loaded models run exceed max_total_threads.
void check_model_threads(const model_config& config, std::size_t threads, std::size_t others,
                         const load_limits& limits);

// Host memory a load may take now: MemAvailable, or the cgroup's limit less its usage where that
// is lower; 0 when neither can be read.
[[nodiscard]] std::size_t available_host_memory();
// MemAvailable of a /proc/meminfo text, in bytes; 0 when it has none.
[[nodiscard]] std::size_t meminfo_available(std::string_view meminfo);

// Throws invalid_argument when `bytes` the model would allocate on the host exceed nine tenths of
// `available` (the rest is kept for requests and the server), naming `what` they are.
void check_host_memory(const model_config& config, std::size_t bytes, std::size_t available, std::string_view what);

// Throws invalid_argument when `bytes` per GPU exceed nine tenths of a GPU's free memory now.
void check_device_memory(const model_config& config, std::size_t bytes, const std::vector<device_caps>& gpus,
                         std::string_view what);

// Throws invalid_argument when the buffers of a model's GPU sessions (instances_per_gpu x inflight
// slots of `bytes_per_slot` each, on every GPU, and as page-locked host staging for each) exceed
// a GPU's free memory or the host's available memory.
void check_session_buffers(const model_config& config, std::size_t bytes_per_slot,
                           const std::vector<device_caps>& gpus);

// The weights a model of `config` allocates when its engine is made: a built-in's
// (builtin_weight_bytes), or a model file's size (its backend reads it). Throws what parsing the
// spec throws.
[[nodiscard]] std::size_t model_weight_bytes(const model_config& config);

}  // namespace ferry::serve
