#include "device/nvml.hpp"

#include <dlfcn.h>

namespace ferry::device::nvml {
namespace {

template <class F>
bool load(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));  // NOLINT: dlsym returns untyped pointers
  return fn != nullptr;
}

}  // namespace

const entry_points* api() noexcept {
  static const entry_points* loaded = []() -> const entry_points* {
    static entry_points e;
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return nullptr;
    result (*init)() = nullptr;
    const bool ok = load(lib, "nvmlInit_v2", init) &&
                    load(lib, "nvmlDeviceGetHandleByPciBusId_v2", e.handle_by_bus_id) &&
                    load(lib, "nvmlDeviceGetCurrPcieLinkGeneration", e.curr_pcie_gen) &&
                    load(lib, "nvmlDeviceGetCurrPcieLinkWidth", e.curr_pcie_width) &&
                    load(lib, "nvmlDeviceGetMaxPcieLinkGeneration", e.max_pcie_gen) &&
                    load(lib, "nvmlDeviceGetMaxPcieLinkWidth", e.max_pcie_width) &&
                    load(lib, "nvmlDeviceGetClockInfo", e.clock_info);
    if (!ok || init() != success) return nullptr;
    // The newer name first; drivers before 535 only have the older one.
    if (!load(lib, "nvmlDeviceGetCurrentClocksEventReasons", e.clock_event_reasons))
      (void)load(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", e.clock_event_reasons);
    return &e;
  }();
  return loaded;
}

device_handle device_by_bus_id(const std::string& pci_bus_id) noexcept {
  const entry_points* nvml = api();
  if (nvml == nullptr || pci_bus_id.empty()) return nullptr;
  device_handle dev = nullptr;
  return nvml->handle_by_bus_id(pci_bus_id.c_str(), &dev) == success ? dev : nullptr;
}

}  // namespace ferry::device::nvml
