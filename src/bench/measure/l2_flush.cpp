#include "bench/measure/l2_flush.hpp"

#include <cuda_runtime_api.h>

#include "ferry/core/error.hpp"

namespace ferry::bench {
namespace {

std::size_t l2_bytes(int ordinal) {
  int bytes = 0;
  FERRY_CUDA_TRY(cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, ordinal));
  return static_cast<std::size_t>(bytes);
}

}  // namespace

l2_flush::l2_flush(int ordinal) : stream_(ordinal), buffer_(core::allocate_device(l2_bytes(ordinal), ordinal)) {}

void l2_flush::flush_blocking() {
  if (buffer_.size() == 0) return;
  const auto on_device = stream_.activate();
  FERRY_CUDA_TRY(cudaMemsetAsync(buffer_.get(), 0, buffer_.size(), stream_.ref().get()));
  stream_.synchronize_blocking();
}

}  // namespace ferry::bench
