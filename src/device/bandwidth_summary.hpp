// Median and best of a series of per-copy bandwidths; shared by the host-link and peer-link
// measurements so both summarise the same way. Internal to src/device.
#pragma once

#include <algorithm>
#include <vector>

#include "core/median.hpp"

namespace ferry::device {

struct bandwidth_summary {
  double median_gbps;
  double best_gbps;
};

// `gbps` must not be empty.
[[nodiscard]] inline bandwidth_summary summarize_bandwidth(const std::vector<double>& gbps) {
  return {core::median(gbps), *std::max_element(gbps.begin(), gbps.end())};
}

}  // namespace ferry::device
