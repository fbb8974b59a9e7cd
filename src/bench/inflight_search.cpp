#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "ferry/bench/run.hpp"

namespace ferry::bench {
namespace {

constexpr int depths[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
// Slots hold a request's buffers each: past this much host and device memory a deeper pipeline
// only costs memory (a 64 MB request at 64 slots would pin 8 GB).
constexpr double memory_cap_bytes = 8.0 * (1ULL << 30);

// How much better a rate must be to count as higher: twice the combined noise of the two rates,
// and never less than 1%.
double margin(const strategy_result& a, const strategy_result& b) {
  return std::max(0.01, 2 * std::hypot(a.throughput_noise, b.throughput_noise));
}

}  // namespace

inflight_choice choose_inflight(const workload& w, strategy_kind strategy, const run_options& options,
                                const cell_function& run) {
  run_options trial = options;
  trial.inflight_auto = false;
  trial.iterations.reset();
  trial.recipes = false;
  trial.um_counters = false;
  trial.window_seconds = std::max(0.3, options.window_seconds.value_or(1.2) / 4);
  trial.limits.max_seconds = *trial.window_seconds;  // a fixed window: the trials compare, not report
  inflight_choice out;
  out.trials.reserve(std::size(depths));  // `best` points into it
  const strategy_result* best = nullptr;
  int without_gain = 0;
  for (const int depth : depths) {
    if (!out.trials.empty()) {
      const double request_bytes = static_cast<double>(out.trials.front().input_bytes + out.trials.front().output_bytes);
      if (request_bytes * depth > memory_cap_bytes && depth > 1) break;
    }
    trial.session.inflight = depth;
    out.trials.push_back(run(w, strategy, trial));
    const strategy_result& r = out.trials.back();
    if (r.refused) break;
    if (best == nullptr || r.throughput_per_s > best->throughput_per_s * (1 + margin(r, *best))) {
      best = &r;
      without_gain = 0;
    } else if (++without_gain == 2) {
      break;
    }
  }
  if (best == nullptr) {
    out.explanation = "inflight auto: not even one slot ran" +
                      (out.trials.empty() || !out.trials.front().refused ? std::string() : ": " + *out.trials.front().refused);
    return out;
  }
  // The smallest count whose rate is within noise of the best: slots beyond it only add latency.
  for (const auto& r : out.trials) {
    if (r.refused) continue;
    if (r.throughput_per_s >= best->throughput_per_s * (1 - margin(r, *best))) {
      out.depth = r.inflight;
      break;
    }
  }
  std::string tried;
  for (const auto& r : out.trials) {
    if (r.refused) continue;
    tried += fmt::format("{}{}: {:.0f} ±{:.1f}%", tried.empty() ? "" : ", ", r.inflight, r.throughput_per_s,
                         100 * r.throughput_noise);
  }
  out.explanation = fmt::format("inflight auto: {} slot{} (req/s by slots, {:.2g} s windows: {})", *out.depth,
                                *out.depth == 1 ? "" : "s", *trial.window_seconds, tried);
  return out;
}

}  // namespace ferry::bench
