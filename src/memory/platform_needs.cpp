#include "memory/platform_needs.hpp"

namespace ferry::memory {

std::optional<std::string> needs_host_mapping(const device_caps& caps) {
  if (!caps.can_map_host_memory) return "the device cannot map host memory (canMapHostMemory=0)";
  return std::nullopt;
}

std::optional<std::string> needs_host_register(const device_caps& caps) {
  if (!caps.host_register_supported) return "the device does not support cudaHostRegister (hostRegisterSupported=0)";
  return std::nullopt;
}

std::optional<std::string> needs_concurrent_managed_memory(const device_caps& caps) {
  if (!caps.managed_memory) return "the device has no managed memory (managedMemory=0)";
  // Without concurrent access the CPU may not touch any managed page while a kernel runs,
  // which rules out filling slot k+1 while slot k computes.
  if (!caps.concurrent_managed_access)
    return "the CPU cannot access managed memory while kernels run "
           "(concurrentManagedAccess=0), which pipelined slots need";
  return std::nullopt;
}

std::optional<std::string> needs_pageable_memory_access(const device_caps& caps) {
  if (!caps.pageable_memory_access)
    return "the device cannot access pageable host memory (pageableMemoryAccess=0: no HMM "
           "or ATS on this platform)";
  return std::nullopt;
}

}  // namespace ferry::memory
