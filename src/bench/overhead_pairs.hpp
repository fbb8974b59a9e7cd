// ferry's own overhead on the device strategy, measured against the bare engine (issue 3's
// "within 10 µs of a bare kernel launch + sync").
#pragma once

#include <vector>

#include "ferry/bench.hpp"
#include "ferry/device_caps.hpp"
#include "ferry/engine.hpp"
#include "ferry/session.hpp"

namespace ferry::bench {

struct overhead_pair {
  double bare_us = 0;     // median: engine enqueue + stream sync, no session
  double session_us = 0;  // median: a device-strategy request of `measured`, submit to completion
};

// Runs 120 pairs (the first 20 warm up) of one bare engine run on its own device buffers and one
// request of `measured`, which must run the device strategy, and returns both medians.
[[nodiscard]] overhead_pair paired_overhead(engine& eng, const std::vector<tensor_spec>& io, const device_caps& caps,
                                            session& measured, input_writes writes);

}  // namespace ferry::bench
