#include "memory/copy_buffer.hpp"

namespace ferry::memory {

void copy_buffer::to_device(stream_ref s) {
  if (!moves_in(dir_)) return;
  FERRY_CUDA_TRY(cudaMemcpyAsync(device_.get(), view_.data(), view_.size(), cudaMemcpyHostToDevice, s.get()));
}

void copy_buffer::to_host(stream_ref s) {
  if (!moves_out(dir_)) return;
  FERRY_CUDA_TRY(cudaMemcpyAsync(view_.data(), device_.get(), view_.size(), cudaMemcpyDeviceToHost, s.get()));
}

}  // namespace ferry::memory
