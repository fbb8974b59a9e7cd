#include "core/managed_memory.hpp"

#include <cuda_runtime_api.h>

#include "ferry/core/error.hpp"

namespace ferry::core {

void free_managed(void* p) noexcept { FERRY_CUDA_TRY_NOTHROW(cudaFree(p)); }

namespace {
// The driver migrates and maps managed memory in 2 MiB blocks. Each allocation is rounded up to
// whole blocks, so no two buffers (an input and its output under other advice, or the buffers of
// two slots) share one: a buffer that shared its block made every prefetched request slower, and
// which of two otherwise identical buffers paid followed their allocation order (docs/RESULTS.md,
// "Strategies beside their recipes"). The span handed out stays `bytes` long: prefetches and
// advice cover the tensor, not the padding.
constexpr std::size_t managed_block = std::size_t{2} << 20;
}  // namespace

managed_memory allocate_managed(std::size_t bytes) {
  void* p = nullptr;
  const std::size_t reserved = (bytes + managed_block - 1) / managed_block * managed_block;
  FERRY_CUDA_TRY(cudaMallocManaged(&p, reserved, cudaMemAttachGlobal));
  return {p, bytes};
}

}  // namespace ferry::core
