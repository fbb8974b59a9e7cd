#include "serve/execution/execution_platform.hpp"

#include <algorithm>

#include "ferry/core/error.hpp"
#include "ferry/device/device_diagnosis.hpp"
#include "ferry/device/device_set.hpp"
#include "ferry/engines/backend.hpp"
#include "ferry/engines/builtin.hpp"
#include "ferry/engines/model_engine.hpp"
#include "ferry/session/session.hpp"
#include "serve/execution/host_executor.hpp"
#include "serve/execution/session_executor.hpp"

namespace ferry::serve {

std::vector<int> serve_devices(std::string_view text, int device_count) {
  if (device_count == 0 && text == "all") return {};
  return parse_device_set(text, device_count);
}

std::vector<profile_lookup> lookup_profiles(const std::vector<device_caps>& gpus, const std::filesystem::path& named) {
  std::vector<profile_lookup> found;
  for (const auto& caps : gpus) {
    if (found.empty() && !named.empty()) {
      found.push_back(load_profile(named, caps));
      continue;
    }
    try {
      found.push_back(load_profile(default_profile_path(caps), caps));
    } catch (const invalid_argument& e) {  // no cache folder: the same as no profile
      found.push_back({.status = profile_status::missing, .path = {}, .profile = {}, .message = e.what()});
    }
  }
  return found;
}

execution_platform detect_platform(std::string_view devices, const std::filesystem::path& profile,
                                   const std::filesystem::path& backend_directory) {
  execution_platform platform;
  platform.backend_directories = backend_directories(backend_directory);
  platform.device_count = cuda_device_count();
  for (const int d : serve_devices(devices, platform.device_count)) {
    platform.gpus.push_back(query_device(d));
    require_code_for(platform.gpus.back());  // refused at start, naming both architectures
  }
  if (platform.gpus.empty()) platform.no_gpu_reason = no_device_reason();
  platform.profiles = lookup_profiles(platform.gpus, profile);
  platform.profile_named = !profile.empty() && !platform.gpus.empty();
  return platform;
}

std::unique_ptr<executor> make_executor(const model_config& config, const execution_platform& platform) {
  if (!platform.gpus.empty()) return make_session_executor(config, platform.gpus, platform.backend_directories);
  std::unique_ptr<host_reference_engine> engine;
  if (is_model_engine_spec(config.engine)) {
    try {
      engine = load_model_engine_on_host(config.engine, {.device = -1,
                                                         .max_concurrency = config.inflight * config.instances_per_gpu,
                                                         .backend_directories = platform.backend_directories,
                                                         .index_bounds = config.index_bounds});
    } catch (const unsupported& e) {
      throw unsupported(std::string(e.what()) + "; this server runs on the CPU (" + platform.no_gpu_reason + ")");
    }
  } else {
    engine = make_builtin_engine(
        config.engine, {.input_bytes = config.input_bytes, .batch = std::max<std::int64_t>(1, config.max_batch)});
  }
  // Nothing moves on the CPU, but a tensor_strategies entry naming no tensor is the same mistake
  // here as on a GPU, and is refused the same way when the model loads.
  check_tensor_strategies(engine->io(), config.tensor_strategies);
  auto signature = make_signature(engine->io(), config.max_batch, config.name);
  return make_host_executor(std::move(engine), std::move(signature), config.inflight * config.instances_per_gpu);
}

}  // namespace ferry::serve
