// The winner of a matrix and the recommendation that goes with it. Private to src/bench and
// its tests.
#pragma once

#include <string>
#include <vector>

#include "ferry/bench/result.hpp"
#include "ferry/session/choose.hpp"

namespace ferry::bench {

struct verdict {
  std::string winner;          // empty: no host-input strategy produced checked results
  std::string recommendation;  // one paragraph: what to use and why
};

// The winner for `goal` and the recommendation, from the results and the platform's advice.
[[nodiscard]] verdict decide_winner(const std::vector<strategy_result>& results, objective goal,
                                    const std::string& platform_advice);

}  // namespace ferry::bench
