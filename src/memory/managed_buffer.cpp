#include "memory/managed_buffer.hpp"

namespace ferry::memory {
namespace {
cudaMemLocation device_location(int ordinal) {
  cudaMemLocation loc{};
  loc.type = cudaMemLocationTypeDevice;
  loc.id = ordinal;
  return loc;
}
cudaMemLocation host_location() {
  cudaMemLocation loc{};
  loc.type = cudaMemLocationTypeHost;
  loc.id = 0;
  return loc;
}
}  // namespace

managed_buffer::managed_buffer(managed_memory memory, managed_mode mode, direction dir, int ordinal)
    : memory_(std::move(memory)), mode_(mode), dir_(dir), ordinal_(ordinal) {
  if (mode_ == managed_mode::advise) {
    FERRY_CUDA_TRY(cudaMemAdvise(memory_.get(), memory_.size(),
                                 cudaMemAdviseSetPreferredLocation, host_location()));
    FERRY_CUDA_TRY(cudaMemAdvise(memory_.get(), memory_.size(), cudaMemAdviseSetAccessedBy,
                                 device_location(ordinal_)));
  }
}

void managed_buffer::to_device(stream_ref s) {
  if (mode_ != managed_mode::prefetch) return;
  FERRY_CUDA_TRY(
      cudaMemPrefetchAsync(memory_.get(), memory_.size(), device_location(ordinal_), 0, s.get()));
}

void managed_buffer::to_host(stream_ref s) {
  if (mode_ != managed_mode::prefetch || !moves_out(dir_)) return;
  FERRY_CUDA_TRY(cudaMemPrefetchAsync(memory_.get(), memory_.size(), host_location(), 0, s.get()));
}

}  // namespace ferry::memory
