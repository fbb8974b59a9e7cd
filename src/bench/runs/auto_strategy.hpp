// `--strategy auto` without a profile: the pick by measuring. Private to src/bench and its tests.
#pragma once

#include <string>
#include <vector>

#include "ferry/bench/result.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/memory/strategy.hpp"
#include "ferry/session/choose.hpp"

namespace ferry::bench {

struct calibration {
  strategy_kind chosen = strategy_kind::pinned;
  std::vector<strategy_result> trials;
  std::string explanation;
};

// What one request of the workload moves on GPU `ordinal` (its engine resolved at its shapes), for
// ferry::choose: ferry::io_traffic_of, the bytes its kernels read included; the kernel's
// re-reading of its input is not known here, so it counts as once.
[[nodiscard]] io_traffic traffic_of(const workload& w, int ordinal);

// `--strategy auto`: a short run of every available host-input strategy on the actual workload,
// then the pick for the objective, with the reason in words.
[[nodiscard]] calibration calibrate_strategy(const workload& w, objective goal, const run_options& options);

}  // namespace ferry::bench
