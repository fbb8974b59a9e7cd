#include "device/nvml_link.hpp"

#include <dlfcn.h>

namespace ferry::device {
namespace {

// The subset of nvml.h that ferry needs, with NVML's documented C signatures.
using nvml_return = int;
using nvml_device = struct nvml_device_opaque*;
constexpr nvml_return nvml_success = 0;

struct nvml_api {
  nvml_return (*init)() = nullptr;
  nvml_return (*handle_by_bus_id)(const char*, nvml_device*) = nullptr;
  nvml_return (*curr_gen)(nvml_device, unsigned int*) = nullptr;
  nvml_return (*curr_width)(nvml_device, unsigned int*) = nullptr;
  nvml_return (*max_gen)(nvml_device, unsigned int*) = nullptr;
  nvml_return (*max_width)(nvml_device, unsigned int*) = nullptr;
  bool ready = false;
};

template <class F>
bool load(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));  // NOLINT: dlsym returns untyped pointers
  return fn != nullptr;
}

const nvml_api& api() {
  static const nvml_api loaded = [] {
    nvml_api a;
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return a;
    const bool ok = load(lib, "nvmlInit_v2", a.init) &&
                    load(lib, "nvmlDeviceGetHandleByPciBusId_v2", a.handle_by_bus_id) &&
                    load(lib, "nvmlDeviceGetCurrPcieLinkGeneration", a.curr_gen) &&
                    load(lib, "nvmlDeviceGetCurrPcieLinkWidth", a.curr_width) &&
                    load(lib, "nvmlDeviceGetMaxPcieLinkGeneration", a.max_gen) &&
                    load(lib, "nvmlDeviceGetMaxPcieLinkWidth", a.max_width);
    // Left initialised for the life of the process: shutting NVML down and up again per query
    // costs milliseconds and gains nothing.
    a.ready = ok && a.init() == nvml_success;
    return a;
  }();
  return loaded;
}

}  // namespace

std::optional<pcie_link> query_pcie_link(const std::string& pci_bus_id) noexcept {
  const nvml_api& nvml = api();
  if (!nvml.ready || pci_bus_id.empty()) return std::nullopt;
  nvml_device dev = nullptr;
  if (nvml.handle_by_bus_id(pci_bus_id.c_str(), &dev) != nvml_success) return std::nullopt;
  unsigned int cg = 0;
  unsigned int cw = 0;
  unsigned int mg = 0;
  unsigned int mw = 0;
  if (nvml.curr_gen(dev, &cg) != nvml_success || nvml.curr_width(dev, &cw) != nvml_success)
    return std::nullopt;
  // The maximum can be unknown on some virtualised hosts; the current link is what matters.
  if (nvml.max_gen(dev, &mg) != nvml_success) mg = cg;
  if (nvml.max_width(dev, &mw) != nvml_success) mw = cw;
  return pcie_link{static_cast<int>(cg), static_cast<int>(cw), static_cast<int>(mg),
                   static_cast<int>(mw)};
}

}  // namespace ferry::device
