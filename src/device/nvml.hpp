// NVML, loaded at run time: the few entry points ferry uses, with NVML's documented C signatures.
//
// NVML ships with the driver (libnvidia-ml.so.1), not with the toolkit's development files on
// every machine, so ferry opens it with dlopen. A machine without NVML has no `api()`: callers
// then report no link or clock information rather than fail.
#pragma once

#include <string>

namespace ferry::device::nvml {

using result = int;
using device_handle = struct device_opaque*;
inline constexpr result success = 0;
inline constexpr int clock_sm = 1;   // NVML_CLOCK_SM
inline constexpr int clock_mem = 2;  // NVML_CLOCK_MEM

struct entry_points {
  result (*handle_by_bus_id)(const char*, device_handle*) = nullptr;
  result (*curr_pcie_gen)(device_handle, unsigned int*) = nullptr;
  result (*curr_pcie_width)(device_handle, unsigned int*) = nullptr;
  result (*max_pcie_gen)(device_handle, unsigned int*) = nullptr;
  result (*max_pcie_width)(device_handle, unsigned int*) = nullptr;
  result (*clock_info)(device_handle, int, unsigned int*) = nullptr;
  // nvmlDeviceGetCurrentClocksEventReasons, or its older name ...ThrottleReasons; may be absent.
  result (*clock_event_reasons)(device_handle, unsigned long long*) = nullptr;
};

// The loaded and initialised library, or nullptr when NVML is unavailable. Initialised once and
// left so for the life of the process: shutting NVML down and up per query costs milliseconds.
[[nodiscard]] const entry_points* api() noexcept;

// The device at `pci_bus_id` ("0000:41:00.0"), or nullptr.
[[nodiscard]] device_handle device_by_bus_id(const std::string& pci_bus_id) noexcept;

}  // namespace ferry::device::nvml
