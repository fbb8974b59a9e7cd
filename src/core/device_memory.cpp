#include "core/device_memory.hpp"

#include <cuda_runtime_api.h>

#include "core/scoped_device.hpp"
#include "ferry/core/error.hpp"

namespace ferry::core {

void free_device(void* p) noexcept { FERRY_CUDA_TRY_NOTHROW(cudaFree(p)); }

device_memory allocate_device(std::size_t bytes) {
  void* p = nullptr;
  FERRY_CUDA_TRY(cudaMalloc(&p, bytes));
  return {p, bytes};
}

device_memory allocate_device(std::size_t bytes, int ordinal) {
  const scoped_device on_device(ordinal);
  return allocate_device(bytes);
}

}  // namespace ferry::core
