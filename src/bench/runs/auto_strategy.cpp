// `--strategy auto`: a short calibration on the actual workload, then the pick and its reason.
#include "bench/runs/auto_strategy.hpp"

#include <fmt/format.h>

#include "bench/measure/cell_runner.hpp"
#include "core/scoped_device.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/device/device_caps.hpp"

namespace ferry::bench {

io_traffic traffic_of(const workload& w, int device) {
  std::unique_ptr<engine> eng;
  {
    core::scoped_device on_device(device);
    eng = w.make_engine(device);
  }
  return io_traffic_of(*eng, eng->resolve(w.shapes));
}

calibration calibrate_strategy(const workload& w, objective goal, const run_options& options) {
  run_options brief = options;
  brief.iterations.reset();
  // One trial each: the pick is a short calibration, the chosen cell is then measured in full.
  brief.limits = {
      .max_noise = 0.02, .min_samples = 20, .min_seconds = 0.05, .max_seconds = 0.4, .min_trials = 1, .max_trials = 1};
  if (brief.window_seconds) brief.window_seconds = 0.4;
  brief.recipes = false;  // the pick compares strategies with each other, not with their recipes
  brief.check_every = 16;
  calibration out;
  // Availability is decided per GPU; with several, each must offer the strategy (run_cell refuses
  // it otherwise), and the first one's capabilities stand for the set.
  const device_caps caps =
      options.capabilities.empty() ? query_device(options.devices.at(0)) : options.capabilities.front();
  const strategy_result* best = nullptr;
  for (auto k : all_strategies) {
    // Data kept in GPU memory (the floor, peer) is not a way to feed host inputs: never the pick.
    if (properties(k).path == data_path::resident || unavailable_reason(k, caps)) continue;
    out.trials.push_back(run_cell(w, k, brief));
  }
  for (const auto& t : out.trials) {
    if (!t.verdict.measured() || !t.verdict.output_matches) continue;
    const bool wins =
        best == nullptr || (goal == objective::latency ? t.figures.latency_us.median < best->figures.latency_us.median
                                                       : t.figures.throughput_per_s > best->figures.throughput_per_s);
    if (wins) best = &t;
  }
  if (best == nullptr) throw unsupported("auto: no strategy produced checked results on " + w.label);
  out.chosen = *best->identity.strategy;  // run_cell names the strategy it ran
  const strategy_result* runner_up = nullptr;
  for (const auto& t : out.trials) {
    if (&t == best || !t.verdict.measured() || !t.verdict.output_matches) continue;
    const bool closer = runner_up == nullptr ||
                        (goal == objective::latency ? t.figures.latency_us.median < runner_up->figures.latency_us.median
                                                    : t.figures.throughput_per_s > runner_up->figures.throughput_per_s);
    if (closer) runner_up = &t;
  }
  auto figure = [goal](const result_figures& f) {
    return goal == objective::latency ? fmt::format("median {:.0f} µs", f.latency_us.median)
                                      : fmt::format("{:.0f} req/s", f.throughput_per_s);
  };
  out.explanation =
      fmt::format("auto picked '{}' for {} on {} after calibrating {} strategies: {}", to_string(out.chosen),
                  to_string(goal), w.label, out.trials.size(), figure(best->figures));
  if (runner_up != nullptr)
    out.explanation +=
        fmt::format(", next '{}' {}", strategy_name(runner_up->identity.strategy), figure(runner_up->figures));
  return out;
}

}  // namespace ferry::bench
