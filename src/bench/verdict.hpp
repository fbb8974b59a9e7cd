// The winner of a matrix and the recommendation that goes with it. Private to src/bench and
// its tests.
#pragma once

#include <string>

#include "ferry/bench/result.hpp"
#include "ferry/choose.hpp"

namespace ferry::bench {

// Fills in report.winner and report.recommendation from the results and the platform.
void decide_winner(bench_report& report, objective goal, const std::string& platform_advice);

}  // namespace ferry::bench
