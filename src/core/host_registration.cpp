#include "core/host_registration.hpp"

#include <cuda_runtime_api.h>

#include <string>

#include "ferry/core/error.hpp"

namespace ferry::core {

void unregister_host(void* p) noexcept { FERRY_CUDA_TRY_NOTHROW(cudaHostUnregister(p)); }

host_registration register_host(std::span<std::byte> memory, unsigned int flags) {
  const cudaError_t status = cudaHostRegister(memory.data(), memory.size(), flags);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    throw unsupported("cannot register " + std::to_string(memory.size()) +
                      " bytes of caller memory with cudaHostRegister: " + cudaGetErrorName(status) + " (" +
                      cudaGetErrorString(status) +
                      "); the memory must be writable, not already registered, and not device "
                      "or managed memory");
  }
  return {memory.data(), memory.size()};
}

}  // namespace ferry::core
