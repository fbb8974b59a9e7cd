// CUPTI's unified-memory counters for a managed strategy's cell. Counting slows migrations down,
// so it runs over extra requests after the timed ones, and the result is per request. Private to
// src/bench.
#pragma once

#include "bench/cell_target.hpp"
#include "ferry/bench/result.hpp"
#include "ferry/bench/run_options.hpp"

namespace ferry::bench {

// Sets r.um (per request) and r.um_note, or only r.um_note saying why there are no counts.
void count_um_traffic(const cell_target& target, const run_options& options, strategy_result& r);

}  // namespace ferry::bench
