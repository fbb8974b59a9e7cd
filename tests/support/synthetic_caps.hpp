// Synthetic capability records shared by the CPU tests: what query_device reports on the
// project's GPU host, and on a Jetson-like integrated GPU.
#pragma once

#include "ferry/device/device_caps.hpp"

namespace ferry::testing {

// The project's GPU host (docs/RESULTS.md): an H200 on PCIe Gen5 x16, no HMM/ATS.
inline device_caps h200_like() {
  device_caps caps;
  caps.ordinal = 0;
  caps.name = "NVIDIA H200";
  caps.compute_major = 9;
  caps.compute_minor = 0;
  caps.multiprocessors = 132;
  caps.total_memory = 150'109'880'320;
  caps.free_memory = 149'000'000'000;
  caps.pci_bus_id = "0000:41:00.0";
  caps.integrated = false;
  caps.can_map_host_memory = true;
  caps.host_register_supported = true;
  caps.managed_memory = true;
  caps.concurrent_managed_access = true;
  caps.pageable_memory_access = false;
  caps.pageable_memory_access_uses_host_page_tables = false;
  caps.direct_managed_mem_access_from_host = false;
  caps.pcie = pcie_link{5, 16, 5, 16};
  return caps;
}

// A Jetson-like record: shared DRAM, no concurrent managed access, no PCIe link.
inline device_caps orin_like() {
  device_caps caps;
  caps.ordinal = 1;
  caps.name = "Orin";
  caps.compute_major = 8;
  caps.compute_minor = 7;
  caps.multiprocessors = 16;
  caps.total_memory = std::size_t{32} << 30;
  caps.free_memory = std::size_t{20} << 30;
  caps.pci_bus_id = "0000:00:00.0";
  caps.integrated = true;
  caps.can_map_host_memory = true;
  caps.host_register_supported = false;
  caps.managed_memory = true;
  caps.concurrent_managed_access = false;
  return caps;
}

}  // namespace ferry::testing
