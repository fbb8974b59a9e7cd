// What a GPU and its link to the host can do, asked of the driver once and kept as plain data.
//
// src/device is the only place that queries the driver for capabilities; everything else
// (strategy availability, recommendations, the CLI) works on these records, so it can be tested
// on synthetic records without a GPU.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferry {

// How host and device memory relate on this platform; decides which strategies make sense.
enum class platform_class {
  discrete_pcie,  // separate memories over PCIe, no access to pageable host memory (x86 + H100/H200)
  integrated,     // GPU shares the host's DRAM (Jetson, DRIVE)
  coherent_hmm,   // discrete GPU that may touch pageable memory through HMM (pages migrate on fault)
  coherent_ats,   // hardware-coherent link using the host's page tables (Grace Hopper NVLink-C2C)
};

[[nodiscard]] std::string_view to_string(platform_class c) noexcept;

struct pcie_link {
  int current_generation = 0;
  int current_width = 0;
  int max_generation = 0;
  int max_width = 0;
};

struct device_caps {
  int ordinal = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
  std::size_t total_memory = 0;
  std::size_t free_memory = 0;  // at query time; allocators re-check before large requests
  std::string pci_bus_id;       // "0000:41:00.0"
  std::string uuid;             // "GPU-8c5e...": names this card across reboots and slot moves
  bool integrated = false;
  bool can_map_host_memory = false;
  bool host_register_supported = false;
  bool managed_memory = false;
  bool concurrent_managed_access = false;
  bool pageable_memory_access = false;
  bool pageable_memory_access_uses_host_page_tables = false;
  bool direct_managed_mem_access_from_host = false;
  // How many GPUs the process sees, and the other GPUs whose memory this one can read and write by
  // peer access (cudaDeviceCanAccessPeer): what a strategy keeping its data on another GPU needs.
  // A record made by hand describes a machine of one GPU unless it says otherwise.
  int device_count = 1;
  std::vector<int> peer_ordinals;
  std::optional<pcie_link> pcie;  // from NVML where available (absent on integrated GPUs)
  int driver_version = 0;         // CUDA's encoding: 1000 * major + 10 * minor (13000 = 13.0)
  int runtime_version = 0;
};

[[nodiscard]] platform_class classify(const device_caps& caps) noexcept;

// The link between host and GPU in words: "PCIe Gen5 x16" (the most card and slot can do),
// "integrated (shared DRAM)", "NVLink-C2C (ATS)"; what a measurement on this device depends on
// besides the card.
[[nodiscard]] std::string describe_link(const device_caps& caps);

// Number of usable CUDA devices; 0 (never an exception) when there is no driver or GPU.
[[nodiscard]] int cuda_device_count() noexcept;

// Why there is no usable device, in one line ("no CUDA device: ..."), or empty when there is one.
[[nodiscard]] std::string no_device_reason();

// Queries one device. Throws no_device when there is none and invalid_argument for a bad ordinal.
[[nodiscard]] device_caps query_device(int ordinal);

// Queries every device; throws no_device when there is none.
[[nodiscard]] std::vector<device_caps> query_all_devices();

// Refreshes free memory of the given device (cudaMemGetInfo on that device).
[[nodiscard]] std::size_t query_free_memory(int ordinal);

}  // namespace ferry
