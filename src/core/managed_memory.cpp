#include "core/managed_memory.hpp"

#include <cuda_runtime_api.h>

#include "ferry/error.hpp"

namespace ferry::core {

void free_managed(void* p) noexcept { FERRY_CUDA_TRY_NOTHROW(cudaFree(p)); }

managed_memory allocate_managed(std::size_t bytes) {
  void* p = nullptr;
  FERRY_CUDA_TRY(cudaMallocManaged(&p, bytes, cudaMemAttachGlobal));
  return {p, bytes};
}

}  // namespace ferry::core
