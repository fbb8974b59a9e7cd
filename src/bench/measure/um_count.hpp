// CUPTI's unified-memory counters for a managed strategy's cell. Counting slows migrations down,
// so it runs over extra requests after the timed ones, and the result is per request. Private to
// src/bench.
#pragma once

#include <optional>
#include <string>

#include "bench/measure/cell_target.hpp"
#include "ferry/bench/result.hpp"
#include "ferry/bench/run_options.hpp"

namespace ferry::bench {

// The counts (per request) and how they were taken, or no counts and why.
struct um_reading {
  std::optional<um_traffic> traffic;
  std::string note;
};

[[nodiscard]] um_reading count_um_traffic(const cell_target& target, const run_options& options);

}  // namespace ferry::bench
