// The winner of a benchmark matrix and the recommendation that goes with it.
#include "bench/statistics/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>

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

// A cell: one workload at one size.
using cell_key = std::pair<std::string, std::size_t>;
using cell_results = std::map<cell_key, const strategy_result*>;

cell_key cell_of(const strategy_result& r) { return {r.identity.engine, r.identity.input_bytes}; }

bool in_cell(const strategy_result& r, const cell_key& key) {
  return r.identity.engine == key.first && r.identity.input_bytes == key.second;
}

// The best usable result of each cell: the yardstick for the others in it.
cell_results best_of_cells(const std::vector<strategy_result>& results, objective goal) {
  cell_results best;
  for (const auto& r : results) {
    if (!usable(r)) continue;
    const auto it = best.find(cell_of(r));
    if (it == best.end() || better(r.figures, it->second->figures, goal)) best[cell_of(r)] = &r;
  }
  return best;
}

// The device-resident result of each cell: the floor the winner is set against, though it never wins.
cell_results floors_of_cells(const std::vector<strategy_result>& results) {
  cell_results floor;
  for (const auto& r : results)
    if (r.identity.strategy == strategy_kind::device && r.verdict.measured()) floor[cell_of(r)] = &r;
  return floor;
}

// Per strategy, the sum of the logarithms of its penalties and the number of cells it ran in.
std::map<std::string, std::pair<double, int>> log_penalties(const std::vector<strategy_result>& results,
                                                            const cell_results& best, objective goal) {
  std::map<std::string, std::pair<double, int>> score;
  for (const auto& r : results) {
    if (!usable(r)) continue;
    auto& [log_sum, cells] = score[std::string(strategy_name(r.identity.strategy))];
    log_sum += std::log(penalty(r.figures, best.at(cell_of(r))->figures, goal));
    ++cells;
  }
  return score;
}

struct standing {
  std::string name;
  double score = 0;  // geometric mean of the penalties; 0 where no strategy ran in every cell
};

// The lowest geometric mean of the penalties among the strategies that ran in every cell (a
// strategy must have, to win the matrix); without one, the best of the first cell.
standing pick_winner(const std::vector<strategy_result>& results, const cell_results& best, objective goal) {
  standing winner;
  for (const auto& [name, s] : log_penalties(results, best, goal)) {
    if (s.second != static_cast<int>(best.size())) continue;
    const double g = std::exp(s.first / s.second);
    if (winner.name.empty() || g < winner.score) winner = {.name = name, .score = g};
  }
  if (winner.name.empty()) winner.name = strategy_name(best.begin()->second->identity.strategy);
  return winner;
}

std::string headline(objective goal, const standing& winner) {
  std::string text = fmt::format("For {}, '{}' wins on this machine", to_string(goal), winner.name);
  text += winner.score <= 1.0001
              ? " in every cell measured"
              : fmt::format(" (on average {:.0f}% from the best of each cell)", (winner.score - 1) * 100);
  return text;
}

struct cell_entries {
  const strategy_result* winner = nullptr;
  const strategy_result* managed = nullptr;  // fault-driven managed memory, the trap to warn of
};

// The winner's and managed memory's usable results in one cell (the last of each, where repeated).
cell_entries entries_in_cell(const std::vector<strategy_result>& results, const cell_key& key,
                             const std::string& winner) {
  cell_entries found;
  for (const auto& r : results) {
    if (!in_cell(r, key) || !usable(r)) continue;
    if (strategy_name(r.identity.strategy) == winner) found.winner = &r;
    if (r.identity.strategy == strategy_kind::managed) found.managed = &r;
  }
  return found;
}

// Where the winner stands in one cell against the device-resident floor, and where the traps
// are; nothing where the winner did not run in it.
std::optional<std::string> cell_line(const std::vector<strategy_result>& results, const cell_key& key,
                                     const std::string& winner, const cell_results& floor, objective goal) {
  const cell_entries in = entries_in_cell(results, key, winner);
  if (in.winner == nullptr) return std::nullopt;
  std::string cell =
      fmt::format("{} {:.1f} MB: {} {}", key.first, key.second / 1e6, winner, metric(in.winner->figures, goal));
  if (const auto f = floor.find(key); f != floor.end())
    cell += fmt::format(" vs device floor {}", metric(f->second->figures, goal));
  if (in.managed != nullptr && in.managed != in.winner)
    cell += fmt::format(", fault-driven managed {:.1f}x worse", penalty(in.managed->figures, in.winner->figures, goal));
  return cell;
}

std::string cell_lines(const std::vector<strategy_result>& results, const cell_results& best, const std::string& winner,
                       objective goal) {
  const cell_results floor = floors_of_cells(results);
  std::string text;
  for (const auto& [key, b] : best) {
    const auto line = cell_line(results, key, winner, floor, goal);
    if (!line) continue;
    text += (text.empty() ? "" : "; ") + *line;
  }
  return text;
}

}  // namespace

verdict decide_winner(const std::vector<strategy_result>& results, objective goal, const std::string& platform_advice) {
  const cell_results best = best_of_cells(results, goal);
  if (best.empty())
    return {.winner = "", .recommendation = "No host-input strategy produced checked results. " + platform_advice};
  const standing winner = pick_winner(results, best, goal);
  return {.winner = winner.name,
          .recommendation =
              headline(goal, winner) + ". " + cell_lines(results, best, winner.name, goal) + ". " + platform_advice};
}

}  // namespace ferry::bench
