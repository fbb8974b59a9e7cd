// One cell of the matrix measured: its trials back to back (cell_trials.hpp runs them
// interleaved with other cells'). Private to src/bench and its tests.
#pragma once

#include <vector>

#include "bench/measure/inflight_search.hpp"
#include "ferry/bench/result.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/memory/strategy.hpp"

namespace ferry::bench {

// Measures one workload under one strategy, its trials back to back (limits.min_trials and more
// while noisy, each with fresh buffers). Never throws for a strategy the platform refuses, a buffer
// that cannot be made or any other error of the cell: the result carries the reason in `refused`
// (and `failed` for errors).
[[nodiscard]] strategy_result run_cell(const workload& w, strategy_kind strategy, const run_options& options);

// The least free memory over `devices` (each GPU holds a replica's slots) and the card's total.
[[nodiscard]] memory_reader device_memory_reader(const std::vector<int>& devices);

}  // namespace ferry::bench
