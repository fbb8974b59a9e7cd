#include "serve/model_choice.hpp"

#include <fmt/format.h>

#include "ferry/builtin.hpp"
#include "ferry/choose.hpp"
#include "ferry/model_engine.hpp"

namespace ferry::serve {
namespace {

// A request's bytes at the largest batch. Model files are sized only once loaded, on the GPU;
// their pick is made for `input_size` in and out, and the reason says so.
io_traffic traffic_of(const model_config& config, std::string& sizing_note) {
  if (is_model_engine_spec(config.engine)) {
    sizing_note = " (a model file's sizes are known only once it is loaded: chosen for input_size in and out)";
    return {.input_bytes = config.input_bytes, .output_bytes = config.input_bytes};
  }
  const auto engine = make_builtin_engine(
      config.engine, {.input_bytes = config.input_bytes, .batch = std::max<std::int64_t>(1, config.max_batch)});
  io_traffic io;
  for (const auto& t : engine->resolve({})) (t.role == tensor_role::input ? io.input_bytes : io.output_bytes) += t.bytes();
  return io;
}

}  // namespace

std::string choose_automatic(model_config& config, const execution_platform& platform) {
  if (!config.strategy_auto && !config.inflight_auto) return {};
  if (platform.gpus.empty())
    return "auto: no GPU (" + platform.no_gpu_reason + "), the CPU reference runs the model and nothing moves";
  std::string sizing_note;
  const io_traffic io = traffic_of(config, sizing_note);
  const device_caps& caps = platform.gpus.front();
  const profile_lookup* lookup = platform.profiles.empty() ? nullptr : &platform.profiles.front();
  const device_profile* profile = lookup != nullptr && lookup->profile ? &*lookup->profile : nullptr;
  const choice pick = choose(io, caps, profile, objective::throughput);
  if (config.strategy_auto) config.strategy = pick.strategy;
  if (config.inflight_auto) config.inflight = pick.inflight;
  std::string reason = fmt::format("auto: {} with {} in-flight slots on GPU {}: {}{}", to_string(config.strategy),
                                   config.inflight, caps.ordinal, pick.reason, sizing_note);
  // A profile named with --profile is reported whatever kept it out; the cache folder's only when
  // it is there but unusable (no profile there is the ordinary case, and the rules say so).
  if (profile == nullptr && lookup != nullptr && (lookup->status != profile_status::missing || platform.profile_named))
    reason += " [" + lookup->message + "]";
  if (platform.gpus.size() > 1) reason += "; the same on every GPU of the server";
  return reason;
}

}  // namespace ferry::serve
