#include "bench/statistics/advice_check.hpp"

#include <fmt/format.h>

#include "ferry/bench/stats.hpp"

namespace ferry::bench {
namespace {

bool usable(const strategy_result& r) {
  // Data kept in GPU memory (the floor, peer) is not a way to feed host inputs: never the best.
  return r.verdict.measured() && r.verdict.output_matches &&
         (!r.identity.strategy || properties(*r.identity.strategy).path != data_path::resident);
}

double value_of(const result_figures& f, objective goal) {
  return goal == objective::latency ? f.latency_us.median : f.throughput_per_s;
}

bool better(double a, double b, objective goal) { return goal == objective::latency ? a < b : a > b; }

}  // namespace

advice_check check_advice(const std::vector<const strategy_result*>& group, strategy_kind picked, objective goal) {
  advice_check out;
  out.picked = std::string(to_string(picked));
  const strategy_result* best = nullptr;
  const strategy_result* pick = nullptr;
  for (const strategy_result* r : group) {
    if (out.engine.empty()) {
      out.engine = r->identity.engine;
      out.input_bytes = r->identity.input_bytes;
    }
    if (r->identity.strategy == picked) pick = r;
    if (!usable(*r)) continue;
    if (best == nullptr || better(value_of(r->figures, goal), value_of(best->figures, goal), goal)) best = r;
  }
  if (best != nullptr) {
    out.best = strategy_name(best->identity.strategy);
    out.best_value = value_of(best->figures, goal);
  }
  if (pick == nullptr) {
    out.note = "the pick was not among the strategies measured";
  } else if (!pick->verdict.measured()) {
    out.note = "the pick was refused: " + pick->verdict.reason();
  } else if (!pick->verdict.output_matches) {
    out.note = "the pick's outputs did not match the reference";
  } else {
    out.picked_value = value_of(pick->figures, goal);
    // Both figures are positive for any cell that ran; a best of zero would mean nothing ran.
    if (out.best_value > 0 && out.picked_value > 0)
      out.shortfall =
          goal == objective::latency ? out.picked_value / out.best_value - 1 : out.best_value / out.picked_value - 1;
    // The miss judged against what the two figures' noise alone could make of it, within and
    // between trials: two strategies the same within it may rank either way in another run.
    const bool throughput = goal == objective::throughput;
    if (best != nullptr)
      out.noise =
          difference_threshold(judged_noise(pick->figures, throughput), judged_noise(best->figures, throughput));
  }
  return out;
}

std::string summarize_advice(const std::vector<advice_check>& checks) {
  if (checks.empty()) return {};
  std::size_t good = 0;
  for (const auto& c : checks) good += c.within() ? 1 : 0;
  return fmt::format(
      "the profile's pick was within {:.0f}% of the best measured, or the same within their noise, in "
      "{} of {} cells ({:.0f}%)",
      advice_tolerance * 100, good, checks.size(),
      100.0 * static_cast<double>(good) / static_cast<double>(checks.size()));
}

}  // namespace ferry::bench
