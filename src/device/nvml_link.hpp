// PCIe link generation and width from NVML (device/nvml.hpp). A machine without NVML simply
// reports no link information.
#pragma once

#include <optional>
#include <string>

#include "ferry/device/device_caps.hpp"

namespace ferry::device {

// Link of the GPU at `pci_bus_id` ("0000:41:00.0"), or nullopt when NVML or the query is
// unavailable (integrated GPUs have no PCIe link).
[[nodiscard]] std::optional<pcie_link> query_pcie_link(const std::string& pci_bus_id) noexcept;

}  // namespace ferry::device
