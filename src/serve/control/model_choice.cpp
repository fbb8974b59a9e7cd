#include "serve/control/model_choice.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ferry/engines/builtin.hpp"
#include "ferry/engines/model_engine.hpp"
#include "ferry/session/choose.hpp"

namespace ferry::serve {
namespace {

// A built-in engine sized as the model's sessions run it (the largest batch).
std::unique_ptr<host_reference_engine> builtin_engine(const model_config& config) {
  return make_builtin_engine(config.engine,
                             {.input_bytes = config.input_bytes, .batch = std::max<std::int64_t>(1, config.max_batch)});
}

// A request's bytes at the largest batch. Model files are sized only once loaded, on the GPU;
// their pick is made for `input_size` in and out, and the reason says so.
io_traffic traffic_of(const model_config& config, std::string& sizing_note) {
  if (is_model_engine_spec(config.engine)) {
    sizing_note = std::string(
                      " (a model file's sizes are known only once it is loaded: chosen for input_size in and "
                      "out") +
                  (config.strategy_auto ? ", one strategy for every tensor)" : ")");
    return {.input_bytes = config.input_bytes, .output_bytes = config.input_bytes};
  }
  const auto engine = builtin_engine(config);
  return io_traffic_of(*engine, engine->resolve({}));
}

bool named_in(const model_config& config, const std::string& tensor) {
  return std::any_of(config.tensor_strategies.begin(), config.tensor_strategies.end(),
                     [&](const tensor_strategy& o) { return o.tensor == tensor; });
}

// "strategy": "auto" on a built-in engine: the request's pick for most tensors, and each tensor's
// own where its curve says it is clearly cheaper another way (choose_per_tensor). Tensors the
// config names in tensor_strategies keep what it says. Returns the pick's reason, tensor by tensor.
std::string choose_per_tensor_automatic(model_config& config, const device_caps& caps, const device_profile* profile) {
  const auto engine = builtin_engine(config);
  const tensor_choice pick = choose_per_tensor(*engine, engine->resolve({}), caps, profile, objective::throughput);
  config.strategy = pick.request.strategy;
  if (config.inflight_auto) config.inflight = pick.request.inflight;
  std::string per_tensor;
  for (const auto& t : pick.tensors) {
    std::string line = describe(t);
    if (named_in(config, t.tensor)) {
      line = fmt::format("'{}': as tensor_strategies sets it (the pick would be {})", t.tensor, to_string(t.strategy));
    } else if (t.strategy != pick.request.strategy) {
      config.tensor_strategies.push_back({t.tensor, t.strategy});
    }
    per_tensor += (per_tensor.empty() ? "" : "; ") + line;
  }
  const std::string overrides = tensor_strategies_text(config.tensor_strategies);
  return fmt::format("auto: {}{} with {} in-flight slots on GPU {}: {}; per tensor: {}", to_string(config.strategy),
                     overrides.empty() ? "" : " (" + overrides + ")", config.inflight, caps.ordinal,
                     describe(pick.request), per_tensor);
}

}  // namespace

std::string choose_automatic(model_config& config, const execution_platform& platform) {
  if (!config.strategy_auto && !config.inflight_auto) return {};
  if (platform.gpus.empty())
    return "auto: no GPU (" + platform.no_gpu_reason + "), the CPU reference runs the model and nothing moves";
  const device_caps& caps = platform.gpus.front();
  const profile_lookup* lookup = platform.profiles.empty() ? nullptr : &platform.profiles.front();
  const device_profile* profile = lookup != nullptr && lookup->profile ? &*lookup->profile : nullptr;
  std::string reason;
  if (config.strategy_auto && !is_model_engine_spec(config.engine)) {
    reason = choose_per_tensor_automatic(config, caps, profile);
  } else {
    std::string sizing_note;
    const io_traffic io = traffic_of(config, sizing_note);
    const choice pick = choose(io, caps, profile, objective::throughput);
    if (config.strategy_auto) config.strategy = pick.strategy;
    if (config.inflight_auto) config.inflight = pick.inflight;
    reason = fmt::format("auto: {} with {} in-flight slots on GPU {}: {}{}", to_string(config.strategy),
                         config.inflight, caps.ordinal, describe(pick), sizing_note);
  }
  // A profile named with --profile is reported whatever kept it out; the cache folder's only when
  // it is there but unusable (no profile there is the ordinary case, and the rules say so).
  if (profile == nullptr && lookup != nullptr && (lookup->status != profile_status::missing || platform.profile_named))
    reason += " [" + lookup->message + "]";
  if (platform.gpus.size() > 1) reason += "; the same on every GPU of the server";
  return reason;
}

}  // namespace ferry::serve
