#include "core/pinned_memory.hpp"

#include <cuda_runtime_api.h>

#include "ferry/core/error.hpp"

namespace ferry::core {

void free_pinned(void* p) noexcept { FERRY_CUDA_TRY_NOTHROW(cudaFreeHost(p)); }

pinned_memory allocate_pinned(std::size_t bytes, unsigned int flags) {
  void* p = nullptr;
  FERRY_CUDA_TRY(cudaHostAlloc(&p, bytes, flags));
  return {p, bytes};
}

}  // namespace ferry::core
