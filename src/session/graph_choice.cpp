#include "ferry/session/graph_choice.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/median.hpp"
#include "ferry/core/error.hpp"

namespace ferry {

graph_measurement summarise_graph_trial(std::span<const double> rounds_without_us,
                                        std::span<const double> rounds_with_us, int slots) {
  if (rounds_without_us.empty() || rounds_with_us.empty())
    throw invalid_argument("a graph trial needs at least one timed round with graphs and one without");
  if (slots < 1)
    throw invalid_argument("a graph trial's rounds hold at least one request (slots " + std::to_string(slots) + ")");
  return {.without_us = core::median(rounds_without_us) / slots,
          .with_us = core::median(rounds_with_us) / slots,
          .rounds = static_cast<int>(std::min(rounds_without_us.size(), rounds_with_us.size())),
          .slots = slots};
}

bool graphs_pay(const graph_measurement& m) noexcept { return m.with_us <= m.without_us * (1 - graphs_min_saving); }

std::string describe(const graph_measurement& m) {
  return fmt::format(
      "measured {:.0f} us per request with CUDA graphs, {:.0f} us without (median of {} rounds of {} "
      "request(s) in flight): {}",
      m.with_us, m.without_us, m.rounds, m.slots,
      graphs_pay(m) ? "kept" : fmt::format("not faster by {:.0f}%, not used", graphs_min_saving * 100));
}

}  // namespace ferry
