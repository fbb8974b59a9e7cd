// Whether the profile's advice holds on the workload: for a cell group (one engine at one size)
// where several strategies were measured in the same run, what ferry::choose picks from this
// machine's profile against the best strategy measured, so a bench run with a profile shows how
// far `auto` would have been from the best.
#pragma once

#include <string>
#include <vector>

#include "ferry/bench/result.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/memory/strategy.hpp"
#include "ferry/session/choose.hpp"

namespace ferry::bench {

// `group` holds one cell group's results (same engine and size), `picked` the profile's pick.
// Refused cells and cells whose outputs did not match never count as the best; `device` is the
// floor, not a way to feed host inputs, so it never does either. The check's `noise` is compare's
// threshold for the pick's and the best's figures: a pick short of the best by less is right.
[[nodiscard]] advice_check check_advice(const std::vector<const strategy_result*>& group, strategy_kind picked,
                                        objective goal);

// "the profile's pick was within 5% of the best measured, or the same within their noise, in 3 of
// 4 cells (75%)", or empty when there are no checks.
[[nodiscard]] std::string summarize_advice(const std::vector<advice_check>& checks);

}  // namespace ferry::bench
