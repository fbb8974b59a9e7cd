// Median and best of a series of per-copy bandwidths; shared by the host-link and peer-link
// measurements so both summarise the same way. Internal to src/device.
#pragma once

#include <algorithm>
#include <vector>

namespace ferry::device {

struct bandwidth_summary {
  double median_gbps;
  double best_gbps;
};

// `gbps` must not be empty.
[[nodiscard]] inline bandwidth_summary summarize_bandwidth(std::vector<double> gbps) {
  std::sort(gbps.begin(), gbps.end());
  const std::size_t n = gbps.size();
  const double median = n % 2 == 1 ? gbps[n / 2] : (gbps[n / 2 - 1] + gbps[n / 2]) / 2.0;
  return {median, gbps.back()};
}

}  // namespace ferry::device
