#include "ferry/device/device_caps.hpp"

#include <array>
#include <string>

#include <fmt/format.h>

#include <cuda_runtime_api.h>

#include "core/managed_memory.hpp"
#include "core/scoped_device.hpp"
#include "device/nvml_link.hpp"
#include "ferry/core/error.hpp"
#include "ferry/device/device_diagnosis.hpp"

namespace ferry {

std::string_view to_string(platform_class c) noexcept {
  switch (c) {
    case platform_class::discrete_pcie:
      return "discrete-pcie";
    case platform_class::integrated:
      return "integrated";
    case platform_class::coherent_hmm:
      return "coherent-hmm";
    case platform_class::coherent_ats:
      return "coherent-ats";
  }
  return "unknown";
}

platform_class classify(const device_caps& caps) noexcept {
  // Integrated wins: the GPU shares DRAM with the CPU whatever else it reports.
  if (caps.integrated) return platform_class::integrated;
  if (caps.pageable_memory_access)
    return caps.pageable_memory_access_uses_host_page_tables ? platform_class::coherent_ats
                                                             : platform_class::coherent_hmm;
  return platform_class::discrete_pcie;
}

std::string describe_link(const device_caps& caps) {
  switch (classify(caps)) {
    case platform_class::integrated:
      return "integrated (shared DRAM)";
    case platform_class::coherent_ats:
      return "NVLink-C2C (ATS)";
    case platform_class::discrete_pcie:
    case platform_class::coherent_hmm:
      break;
  }
  if (!caps.pcie) return "PCIe (generation and width not reported)";
  // The most the card and its slot can do, not the current state: an idle GPU drops its link to
  // a lower generation to save power, which must not make yesterday's profile look stale.
  return fmt::format("PCIe Gen{} x{}", caps.pcie->max_generation, caps.pcie->max_width);
}

int cuda_device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

std::string no_device_reason() { return explain_no_device(gather_cuda_platform_facts()); }

namespace {

// nvidia-smi's spelling, so a profile's file name matches what `nvidia-smi -L` shows.
std::string format_uuid(const cudaUUID_t& uuid) {
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    text += fmt::format("{:02x}", static_cast<unsigned char>(uuid.bytes[i]));
  }
  return text;
}
bool attribute(cudaDeviceAttr attr, int ordinal) {
  int value = 0;
  FERRY_CUDA_TRY(cudaDeviceGetAttribute(&value, attr, ordinal));
  return value != 0;
}
}  // namespace

std::size_t query_free_memory(int ordinal) {
  core::scoped_device on_device(ordinal);
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  FERRY_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

device_caps query_device(int ordinal) {
  const int count = cuda_device_count();
  if (count == 0) throw no_device(no_device_reason());
  if (ordinal < 0 || ordinal >= count)
    throw invalid_argument("GPU " + std::to_string(ordinal) + " does not exist (this machine has " +
                           std::to_string(count) + ")");

  cudaDeviceProp prop{};
  FERRY_CUDA_TRY(cudaGetDeviceProperties(&prop, ordinal));
  device_caps caps;
  caps.ordinal = ordinal;
  caps.name = prop.name;
  caps.compute_major = prop.major;
  caps.compute_minor = prop.minor;
  caps.multiprocessors = prop.multiProcessorCount;
  caps.uuid = format_uuid(prop.uuid);
  caps.integrated = attribute(cudaDevAttrIntegrated, ordinal);
  caps.can_map_host_memory = attribute(cudaDevAttrCanMapHostMemory, ordinal);
  caps.host_register_supported = attribute(cudaDevAttrHostRegisterSupported, ordinal);
  caps.managed_memory = attribute(cudaDevAttrManagedMemory, ordinal);
  caps.concurrent_managed_access = attribute(cudaDevAttrConcurrentManagedAccess, ordinal);
  caps.pageable_memory_access = attribute(cudaDevAttrPageableMemoryAccess, ordinal);
  caps.pageable_memory_access_uses_host_page_tables =
      attribute(cudaDevAttrPageableMemoryAccessUsesHostPageTables, ordinal);
  caps.direct_managed_mem_access_from_host = attribute(cudaDevAttrDirectManagedMemAccessFromHost, ordinal);
  caps.device_count = count;
  for (int other = 0; other < count; ++other) {
    int can = 0;
    if (other != ordinal) FERRY_CUDA_TRY(cudaDeviceCanAccessPeer(&can, ordinal, other));
    if (can != 0) caps.peer_ordinals.push_back(other);
  }

  std::array<char, 32> bus_id{};
  FERRY_CUDA_TRY(cudaDeviceGetPCIBusId(bus_id.data(), static_cast<int>(bus_id.size()), ordinal));
  caps.pci_bus_id = bus_id.data();

  {
    core::scoped_device on_device(ordinal);
    FERRY_CUDA_TRY(cudaMemGetInfo(&caps.free_memory, &caps.total_memory));
  }
  if (!caps.integrated) caps.pcie = device::query_pcie_link(caps.pci_bus_id);
  FERRY_CUDA_TRY(cudaDriverGetVersion(&caps.driver_version));
  FERRY_CUDA_TRY(cudaRuntimeGetVersion(&caps.runtime_version));
  return caps;
}

std::vector<device_caps> query_all_devices() {
  const int count = cuda_device_count();
  if (count == 0) throw no_device(no_device_reason());
  std::vector<device_caps> all;
  all.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) all.push_back(query_device(i));
  return all;
}

}  // namespace ferry
