#include "serve/config/load_check.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "ferry/core/byte_size.hpp"
#include "ferry/core/error.hpp"
#include "ferry/engines/builtin.hpp"
#include "ferry/engines/model_engine.hpp"

namespace ferry::serve {
namespace {

std::optional<std::size_t> read_number(const char* file) {
  std::ifstream in(file);
  std::string text;
  if (!(in >> text) || text == "max") return std::nullopt;
  try {
    return static_cast<std::size_t>(std::stoull(text));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// What nine tenths of `available` leaves for a load: the last tenth is the server's and its
// requests'.
std::size_t usable(std::size_t available) { return available / 10 * 9; }

[[noreturn]] void refuse(const model_config& config, const std::string& problem) {
  throw invalid_argument("model '" + config.name + "': " + problem);
}

}  // namespace

std::size_t model_threads(const model_config& config, std::size_t gpus) noexcept {
  const auto per_device =
      static_cast<std::size_t>(config.instances_per_gpu) * static_cast<std::size_t>(config.inflight);
  return per_device * std::max<std::size_t>(1, gpus) + 1;
}

void check_model_threads(const model_config& config, std::size_t threads, std::size_t others,
                         const load_limits& limits) {
  if (threads > limits.max_model_threads)
    refuse(config, "its config asks for " + std::to_string(threads) + " threads (instances_per_gpu " +
                       std::to_string(config.instances_per_gpu) + " x inflight " + std::to_string(config.inflight) +
                       " workers per device, and one more), more than the " + std::to_string(limits.max_model_threads) +
                       " a model may have (--max-model-threads)");
  if (threads + others > limits.max_total_threads)
    refuse(config, "its " + std::to_string(threads) + " threads and the " + std::to_string(others) +
                       " of the models loaded exceed the " + std::to_string(limits.max_total_threads) +
                       " the server runs for models (--max-total-model-threads)");
}

std::size_t meminfo_available(std::string_view meminfo) {
  std::istringstream lines{std::string(meminfo)};
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (lines >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

std::size_t available_host_memory() {
  std::ifstream in("/proc/meminfo");
  std::stringstream text;
  text << in.rdbuf();
  std::size_t available = meminfo_available(text.str());
  // A container's limit (cgroup v2, then v1) may be far below what the machine has free.
  for (const auto& [limit_file, usage_file] :
       {std::pair{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
        std::pair{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"}}) {
    const auto limit = read_number(limit_file);
    const auto usage = read_number(usage_file);
    if (limit && usage) {
      const std::size_t left = *limit > *usage ? *limit - *usage : 0;
      available = available == 0 ? left : std::min(available, left);
      break;
    }
  }
  return available;
}

void check_host_memory(const model_config& config, std::size_t bytes, std::size_t available, std::string_view what) {
  if (available == 0 || bytes <= usable(available)) return;
  refuse(config, "its " + std::string(what) + " would take " + format_byte_size(bytes) +
                     " of host memory, and the host has " + format_byte_size(available) +
                     " available (a load may take nine tenths of it)");
}

void check_device_memory(const model_config& config, std::size_t bytes, const std::vector<device_caps>& gpus,
                         std::string_view what) {
  for (const auto& gpu : gpus) {
    const std::size_t free = query_free_memory(gpu.ordinal);
    if (bytes > usable(free))
      refuse(config, "its " + std::string(what) + " would take " + format_byte_size(bytes) + " on GPU " +
                         std::to_string(gpu.ordinal) + ", which has " + format_byte_size(free) +
                         " free (a load may take nine tenths of it)");
  }
}

void check_session_buffers(const model_config& config, std::size_t bytes_per_slot,
                           const std::vector<device_caps>& gpus) {
  const std::size_t slots =
      static_cast<std::size_t>(config.instances_per_gpu) * static_cast<std::size_t>(config.inflight);
  check_device_memory(config, slots * bytes_per_slot, gpus, "sessions' buffers");
  check_host_memory(config, slots * bytes_per_slot * gpus.size(), available_host_memory(),
                    "sessions' page-locked staging");
}

std::size_t model_weight_bytes(const model_config& config) {
  if (!is_model_engine_spec(config.engine)) return builtin_weight_bytes(config.engine);
  const std::filesystem::path file = config.engine.substr(config.engine.find(':') + 1);
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  return ec ? 0 : static_cast<std::size_t>(size);  // a missing file is the backend's to name
}

}  // namespace ferry::serve
