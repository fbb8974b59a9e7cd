#include <ctime>

#include <fmt/format.h>

#include "bench/measure/host_probe.hpp"
#include "core/scoped_device.hpp"
#include "ferry/bench/matrix.hpp"
#include "ferry/bench/stats.hpp"
#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/device/device_set.hpp"
#include "ferry/device/link_bandwidth.hpp"
#include "ferry/memory/recommendation.hpp"

namespace ferry::bench {

std::string utc_timestamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

machine_info describe_machine(const std::vector<int>& devices, bool measure_link) {
  const device_caps caps = query_device(devices.front());
  machine_info m;
  m.gpu_name = devices.size() > 1 ? fmt::format("{} (GPUs {})", caps.name, format_device_set(devices)) : caps.name;
  m.platform = std::string(to_string(classify(caps)));
  if (caps.pcie) m.pcie = fmt::format("Gen{} x{}", caps.pcie->current_generation, caps.pcie->current_width);
  m.driver_version = caps.driver_version;
  m.runtime_version = caps.runtime_version;
  std::vector<double> probes;
  for (int i = 0; i < 5; ++i) probes.push_back(time_host_probe_us());
  m.host_probe_us = median_of(probes);
  {
    core::scoped_device on_device(caps.ordinal);
    probes.clear();
    for (int i = 0; i < 5; ++i) probes.push_back(time_cuda_probe_us());
    m.cuda_probe_us = median_of(probes);
  }
  if (measure_link) {
    const auto link = measure_link_bandwidth_blocking(caps.ordinal);
    m.link_peak_h2d_gbps = link.h2d_gbps_best;
    m.link_peak_d2h_gbps = link.d2h_gbps_best;
  }
  return m;
}

}  // namespace ferry::bench
