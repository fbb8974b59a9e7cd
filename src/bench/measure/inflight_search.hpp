// `--inflight auto`: the depth search. Private to src/bench and its tests.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ferry/bench/result.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/memory/strategy.hpp"

namespace ferry::bench {

// The most slots a cell run with `options` may hold per GPU at once: --inflight, or the deepest
// count --inflight auto may try. Model files make one runner per context that may run at once.
[[nodiscard]] int max_slots(const run_options& options) noexcept;

// `--inflight auto`: the slot count for a strategy, found by raising it (1, 2, 3, 4, 6, 8, 12,
// ...) over short throughput windows until two steps in a row no longer beat the best by more
// than their noise; the pick is the smallest count within noise of the best. It never tries a
// count whose slots would not fit: with a memory reading, it stops before a count that would need
// more than the GPU's free memory less options.memory_margin of the card, at the most one slot
// cost so far (each step's device_bytes_used over its slots).
struct depth_search {
  std::optional<int> depth;            // nullopt: not even one slot ran (steps say why)
  std::vector<strategy_result> steps;  // one per count tried, in order
  std::string explanation;             // "inflight auto: 4 slots (req/s at 1: 790, ...)"
};
using cell_function = std::function<strategy_result(const workload&, strategy_kind, const run_options&)>;

// The GPU's memory as the depth search reads it before each step.
struct gpu_memory {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
};
using memory_reader = std::function<gpu_memory()>;

// `run` measures one count (one trial of run_cell's path; tests pass a model of it). Without a
// `memory` reader, only the 8 GiB cap on the requests' own bytes limits the depth.
[[nodiscard]] depth_search search_inflight_depth(const workload& w, strategy_kind strategy, const run_options& options,
                                                 const cell_function& run, const memory_reader& memory = {});

}  // namespace ferry::bench
