// The GPU's clocks and throttle reasons over a stretch of work, sampled through NVML, so a
// benchmark can say when a figure was taken at another clock than its neighbour.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace ferry {

// The GPU's clocks over a stretch of work (a benchmark cell), sampled before, during and after.
struct clock_record {
  unsigned sm_mhz_min = 0;
  unsigned sm_mhz_max = 0;
  unsigned mem_mhz_min = 0;
  unsigned mem_mhz_max = 0;
  // Throttle reasons seen in any sample ("sw-power-cap", "hw-thermal-slowdown", ...); an idle GPU
  // is not a reason (between requests it is expected).
  std::vector<std::string> throttle_reasons;
  std::size_t samples = 0;
  // A clock moved or a throttle reason appeared: figures taken meanwhile may not compare with
  // figures taken at another time.
  bool changed = false;
};

struct clock_sample {
  unsigned sm_mhz = 0;
  unsigned mem_mhz = 0;
  unsigned long long reasons = 0;  // NVML's clocks-event-reason bits
};

// One reading of the GPU at `pci_bus_id`, or nullopt without NVML.
[[nodiscard]] std::optional<clock_sample> read_clocks(const std::string& pci_bus_id) noexcept;

// The names of NVML's clocks-event-reason bits, the idle bit left out (an idle GPU between
// requests is expected, not throttling): 0x4 -> {"sw-power-cap"}.
[[nodiscard]] std::vector<std::string> throttle_reason_names(unsigned long long reasons);

// Folds samples into a record: ranges, reasons seen, and whether anything changed.
[[nodiscard]] clock_record summarize_clocks(const std::vector<clock_sample>& samples);

// Samples the clocks on a thread of its own from construction to finish(): one reading at once,
// then every `period` (10 Hz by default: an NVML query costs tens of microseconds on another
// core, and clocks change over milliseconds).
class clock_monitor {
 public:
  explicit clock_monitor(std::string pci_bus_id, std::chrono::milliseconds period = std::chrono::milliseconds(100));
  ~clock_monitor();
  clock_monitor(const clock_monitor&) = delete;
  clock_monitor& operator=(const clock_monitor&) = delete;

  // Takes a last reading, stops the thread and returns the record; nullopt without NVML.
  [[nodiscard]] std::optional<clock_record> finish();

 private:
  void sample();
  std::string bus_id_;
  std::chrono::milliseconds period_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::vector<clock_sample> samples_;
  std::thread thread_;
};

}  // namespace ferry
