#include "bench/measure/inflight_search.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "ferry/bench/run_options.hpp"

namespace ferry::bench {
namespace {

constexpr int depths[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
// Slots hold a request's buffers each: past this much host and device memory a deeper pipeline
// only costs memory (a 64 MB request at 64 slots would pin 8 GB).
constexpr double memory_cap_bytes = 8.0 * (1ULL << 30);

// How much better a rate must be to count as higher: twice the combined noise of the two rates,
// and never less than 1%.
double margin(const result_figures& a, const result_figures& b) {
  return std::max(0.01, 2 * std::hypot(a.throughput_noise, b.throughput_noise));
}

double gib(double bytes) { return bytes / static_cast<double>(1ULL << 30); }

}  // namespace

int max_slots(const run_options& options) noexcept {
  return options.inflight_auto ? depths[std::size(depths) - 1] : options.session.inflight;
}

depth_search search_inflight_depth(const workload& w, strategy_kind strategy, const run_options& options,
                                   const cell_function& run, const memory_reader& memory) {
  run_options step = options;
  step.inflight_auto = false;
  step.iterations.reset();
  step.recipes = false;
  step.um_counters = false;
  step.window_seconds = std::max(0.3, options.window_seconds.value_or(1.2) / 4);
  step.limits.max_seconds = *step.window_seconds;       // a fixed window: the steps compare, not report
  step.limits.min_trials = step.limits.max_trials = 1;  // one trial per count: the search is a pass
  depth_search out;
  out.steps.reserve(std::size(depths));  // `best` points into it
  const strategy_result* best = nullptr;
  int without_gain = 0;
  // What one slot has cost so far: the most device memory a step held over its slot count. The
  // step's reference session and the engine's own state count as if they were slots' too, so the
  // estimate errs high: the search stops early rather than run the GPU out of memory.
  double per_slot_bytes = 0;
  std::string stopped_by;
  for (const int depth : depths) {
    if (!out.steps.empty()) {
      const double request_bytes =
          static_cast<double>(out.steps.front().identity.input_bytes + out.steps.front().identity.output_bytes);
      if (request_bytes * depth > memory_cap_bytes && depth > 1) break;
    }
    if (memory && per_slot_bytes > 0) {
      const gpu_memory now = memory();
      const double keep = options.memory_margin * static_cast<double>(now.total_bytes);
      const double need = per_slot_bytes * depth;
      if (need + keep > static_cast<double>(now.free_bytes)) {
        stopped_by = fmt::format(
            "; not tried at {}: {} slots would need about {:.1f} GiB of the {:.1f} GiB free, "
            "which must keep {:.1f} GiB ({:g}% of the card) free",
            depth, depth, gib(need), gib(static_cast<double>(now.free_bytes)), gib(keep), 100 * options.memory_margin);
        break;
      }
    }
    step.session.inflight = depth;
    out.steps.push_back(run(w, strategy, step));
    const strategy_result& r = out.steps.back();
    if (!r.verdict.measured()) {
      if (best != nullptr) stopped_by = fmt::format("; stopped at {}: {}", depth, r.verdict.reason());
      break;
    }
    per_slot_bytes = std::max(per_slot_bytes, static_cast<double>(r.figures.device_bytes_used) / depth);
    if (best == nullptr ||
        r.figures.throughput_per_s > best->figures.throughput_per_s * (1 + margin(r.figures, best->figures))) {
      best = &r;
      without_gain = 0;
    } else if (++without_gain == 2) {
      break;
    }
  }
  if (best == nullptr) {
    out.explanation =
        "inflight auto: not even one slot ran" + (out.steps.empty() || out.steps.front().verdict.measured()
                                                      ? std::string()
                                                      : ": " + out.steps.front().verdict.reason());
    return out;
  }
  // The smallest count whose rate is within noise of the best: slots beyond it only add latency.
  for (const auto& r : out.steps) {
    if (!r.verdict.measured()) continue;
    if (r.figures.throughput_per_s >= best->figures.throughput_per_s * (1 - margin(r.figures, best->figures))) {
      out.depth = r.identity.inflight;
      break;
    }
  }
  std::string tried;
  for (const auto& r : out.steps) {
    if (!r.verdict.measured()) continue;
    tried += fmt::format("{}{}: {:.0f} ±{:.1f}%", tried.empty() ? "" : ", ", r.identity.inflight,
                         r.figures.throughput_per_s, 100 * r.figures.throughput_noise);
  }
  out.explanation = fmt::format("inflight auto: {} slot{} (req/s by slots, {:.2g} s windows: {}{})", *out.depth,
                                *out.depth == 1 ? "" : "s", *step.window_seconds, tried, stopped_by);
  return out;
}

}  // namespace ferry::bench
