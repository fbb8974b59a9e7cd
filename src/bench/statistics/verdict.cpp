// The winner of a benchmark matrix and the recommendation that goes with it.
#include "bench/statistics/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "ferry/bench/run_options.hpp"

namespace ferry::bench {
namespace {

bool usable(const strategy_result& r) {
  // Data kept in GPU memory (the floor, peer) is not a way to feed host inputs: never the winner.
  return r.verdict.measured() && r.verdict.output_matches && r.figures.iterations > 0 &&
         (!r.identity.strategy || properties(*r.identity.strategy).path != data_path::resident);
}

// How far a result is from the best of its cell: 1 is the best, 1.3 is 30% worse.
double penalty(const result_figures& r, const result_figures& best, objective goal) {
  if (goal == objective::latency) return r.latency_us.median / best.latency_us.median;
  return best.throughput_per_s / r.throughput_per_s;
}

bool better(const result_figures& a, const result_figures& b, objective goal) {
  return goal == objective::latency ? a.latency_us.median < b.latency_us.median
                                    : a.throughput_per_s > b.throughput_per_s;
}

std::string metric(const result_figures& r, objective goal) {
  return goal == objective::latency ? fmt::format("{:.0f} µs", r.latency_us.median)
                                    : fmt::format("{:.0f} req/s", r.throughput_per_s);
}

}  // namespace

verdict decide_winner(const std::vector<strategy_result>& results, objective goal, const std::string& platform_advice) {
  // Cells: one workload at one size. The best of each is the yardstick for the others.
  std::map<std::pair<std::string, std::size_t>, const strategy_result*> best;
  std::map<std::pair<std::string, std::size_t>, const strategy_result*> floor;
  for (const auto& r : results) {
    const auto key = std::make_pair(r.identity.engine, r.identity.input_bytes);
    if (r.identity.strategy == strategy_kind::device && r.verdict.measured()) floor[key] = &r;
    if (!usable(r)) continue;
    if (!best.count(key) || better(r.figures, best[key]->figures, goal)) best[key] = &r;
  }
  if (best.empty())
    return {.winner = "", .recommendation = "No host-input strategy produced checked results. " + platform_advice};
  // Geometric mean of the penalties over the cells a strategy ran in.
  std::map<std::string, std::pair<double, int>> score;
  for (const auto& r : results) {
    if (!usable(r)) continue;
    auto& [log_sum, cells] = score[std::string(strategy_name(r.identity.strategy))];
    log_sum += std::log(penalty(r.figures, best.at({r.identity.engine, r.identity.input_bytes})->figures, goal));
    ++cells;
  }
  std::string winner;
  double winner_score = 0;
  for (const auto& [name, s] : score) {
    const double g = std::exp(s.first / s.second);
    // A strategy must have run in every cell to win the matrix.
    if (s.second != static_cast<int>(best.size())) continue;
    if (winner.empty() || g < winner_score) {
      winner = name;
      winner_score = g;
    }
  }
  if (winner.empty()) winner = strategy_name(best.begin()->second->identity.strategy);
  std::string text = fmt::format("For {}, '{}' wins on this machine", to_string(goal), winner);
  text += winner_score <= 1.0001
              ? " in every cell measured"
              : fmt::format(" (on average {:.0f}% from the best of each cell)", (winner_score - 1) * 100);
  // Where the winner stands against the device-resident floor, and where the traps are.
  std::vector<std::string> cells;
  for (const auto& [key, b] : best) {
    const strategy_result* w = nullptr;
    const strategy_result* managed = nullptr;
    for (const auto& r : results) {
      if (r.identity.engine != key.first || r.identity.input_bytes != key.second || !usable(r)) continue;
      if (strategy_name(r.identity.strategy) == winner) w = &r;
      if (r.identity.strategy == strategy_kind::managed) managed = &r;
    }
    if (w == nullptr) continue;
    std::string cell =
        fmt::format("{} {:.1f} MB: {} {}", key.first, key.second / 1e6, winner, metric(w->figures, goal));
    if (floor.count(key)) cell += fmt::format(" vs device floor {}", metric(floor.at(key)->figures, goal));
    if (managed != nullptr && managed != w)
      cell += fmt::format(", fault-driven managed {:.1f}x worse", penalty(managed->figures, w->figures, goal));
    cells.push_back(cell);
  }
  text += ". ";
  for (std::size_t i = 0; i < cells.size(); ++i) text += (i ? "; " : "") + cells[i];
  text += ". " + platform_advice;
  return {.winner = winner, .recommendation = text};
}

}  // namespace ferry::bench
