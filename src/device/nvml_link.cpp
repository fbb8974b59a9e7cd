#include "device/nvml_link.hpp"

#include "device/nvml.hpp"

namespace ferry::device {

std::optional<pcie_link> query_pcie_link(const std::string& pci_bus_id) noexcept {
  const nvml::entry_points* api = nvml::api();
  nvml::device_handle dev = nvml::device_by_bus_id(pci_bus_id);
  if (api == nullptr || dev == nullptr) return std::nullopt;
  unsigned int cg = 0;
  unsigned int cw = 0;
  unsigned int mg = 0;
  unsigned int mw = 0;
  if (api->curr_pcie_gen(dev, &cg) != nvml::success || api->curr_pcie_width(dev, &cw) != nvml::success)
    return std::nullopt;
  // The maximum can be unknown on some virtualised hosts; the current link is what matters.
  if (api->max_pcie_gen(dev, &mg) != nvml::success) mg = cg;
  if (api->max_pcie_width(dev, &mw) != nvml::success) mw = cw;
  return pcie_link{static_cast<int>(cg), static_cast<int>(cw), static_cast<int>(mg), static_cast<int>(mw)};
}

}  // namespace ferry::device
