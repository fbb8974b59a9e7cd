#include "memory/copy_buffer.hpp"

namespace ferry::memory {

void copy_buffer::to_device(stream_ref s, std::size_t bytes) {
  if (!moves_in(dir_)) return;
  FERRY_CUDA_TRY(cudaMemcpyAsync(device_.get(), view_.data(), bytes, cudaMemcpyHostToDevice, s.get()));
}

void copy_buffer::to_host(stream_ref s, std::size_t bytes) {
  if (!moves_out(dir_)) return;
  FERRY_CUDA_TRY(cudaMemcpyAsync(view_.data(), device_.get(), bytes, cudaMemcpyDeviceToHost, s.get()));
}

}  // namespace ferry::memory
