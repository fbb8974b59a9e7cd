// PCIe link generation and width from NVML, loaded at run time.
//
// NVML ships with the driver (libnvidia-ml.so.1), not with the toolkit's development files on
// every machine, so ferry opens it with dlopen and declares the four entry points it uses. A
// machine without NVML simply reports no link information.
#pragma once

#include <optional>
#include <string>

#include "ferry/device_caps.hpp"

namespace ferry::device {

// Link of the GPU at `pci_bus_id` ("0000:41:00.0"), or nullopt when NVML or the query is
// unavailable (integrated GPUs have no PCIe link).
[[nodiscard]] std::optional<pcie_link> query_pcie_link(const std::string& pci_bus_id) noexcept;

}  // namespace ferry::device
