#include "ferry/device/gpu_clocks.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "device/nvml.hpp"

namespace ferry {
namespace nvml = device::nvml;

std::optional<clock_sample> read_clocks(const std::string& pci_bus_id) noexcept {
  const nvml::entry_points* api = nvml::api();
  nvml::device_handle dev = nvml::device_by_bus_id(pci_bus_id);
  if (api == nullptr || dev == nullptr) return std::nullopt;
  clock_sample s;
  if (api->clock_info(dev, nvml::clock_sm, &s.sm_mhz) != nvml::success ||
      api->clock_info(dev, nvml::clock_mem, &s.mem_mhz) != nvml::success)
    return std::nullopt;
  if (api->clock_event_reasons != nullptr && api->clock_event_reasons(dev, &s.reasons) != nvml::success) s.reasons = 0;
  return s;
}

std::vector<std::string> throttle_reason_names(unsigned long long reasons) {
  // nvmlClocksEventReason* bits; 0x1 (GPU idle) is left out on purpose.
  constexpr std::array<std::pair<unsigned long long, const char*>, 8> names{{
      {0x2, "applications-clocks-setting"},
      {0x4, "sw-power-cap"},
      {0x8, "hw-slowdown"},
      {0x10, "sync-boost"},
      {0x20, "sw-thermal-slowdown"},
      {0x40, "hw-thermal-slowdown"},
      {0x80, "hw-power-brake-slowdown"},
      {0x100, "display-clock-setting"},
  }};
  std::vector<std::string> out;
  for (const auto& [bit, name] : names)
    if ((reasons & bit) != 0) out.emplace_back(name);
  return out;
}

clock_record summarize_clocks(const std::vector<clock_sample>& samples) {
  clock_record r;
  r.samples = samples.size();
  if (samples.empty()) return r;
  unsigned long long seen = 0;
  r.sm_mhz_min = r.sm_mhz_max = samples.front().sm_mhz;
  r.mem_mhz_min = r.mem_mhz_max = samples.front().mem_mhz;
  for (const auto& s : samples) {
    r.sm_mhz_min = std::min(r.sm_mhz_min, s.sm_mhz);
    r.sm_mhz_max = std::max(r.sm_mhz_max, s.sm_mhz);
    r.mem_mhz_min = std::min(r.mem_mhz_min, s.mem_mhz);
    r.mem_mhz_max = std::max(r.mem_mhz_max, s.mem_mhz);
    seen |= s.reasons;
  }
  r.throttle_reasons = throttle_reason_names(seen);
  r.changed = r.sm_mhz_min != r.sm_mhz_max || r.mem_mhz_min != r.mem_mhz_max || !r.throttle_reasons.empty();
  return r;
}

clock_monitor::clock_monitor(std::string pci_bus_id, std::chrono::milliseconds period)
    : bus_id_(std::move(pci_bus_id)), period_(period) {
  sample();
  if (samples_.empty()) return;  // no NVML: nothing to sample
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, period_, [this] { return stop_; })) {
      lock.unlock();
      sample();
      lock.lock();
    }
  });
}

clock_monitor::~clock_monitor() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void clock_monitor::sample() {
  if (auto s = read_clocks(bus_id_)) {
    std::lock_guard lock(mutex_);
    samples_.push_back(*s);
  }
}

std::optional<clock_record> clock_monitor::finish() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
  if (samples_.empty()) return std::nullopt;
  sample();
  return summarize_clocks(samples_);
}

}  // namespace ferry
