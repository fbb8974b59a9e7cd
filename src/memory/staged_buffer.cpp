#include "memory/staged_buffer.hpp"

#include <cstring>

namespace ferry::memory {
namespace {
void run_host_copy(void* user_data) {
  const auto* copy = static_cast<const staged_buffer::host_copy*>(user_data);
  std::memcpy(copy->dst, copy->src, copy->bytes);
}

bool capturing(stream_ref s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  FERRY_CUDA_TRY(cudaStreamIsCapturing(s.get(), &status));
  return status != cudaStreamCaptureStatusNone;
}
}  // namespace

staged_buffer::staged_buffer(core::pageable_memory host, core::pinned_memory staging, core::device_memory device,
                             direction dir)
    : host_(std::move(host)),
      staging_(std::move(staging)),
      device_(std::move(device)),
      dir_(dir),
      in_(std::make_unique<host_copy>(host_copy{staging_.get(), host_.get(), host_.size()})),
      out_(std::make_unique<host_copy>(host_copy{host_.get(), staging_.get(), host_.size()})) {}

void staged_buffer::to_device(stream_ref s) {
  if (!moves_in(dir_)) return;
  if (capturing(s))
    FERRY_CUDA_TRY(cudaLaunchHostFunc(s.get(), run_host_copy, in_.get()));
  else
    run_host_copy(in_.get());
  FERRY_CUDA_TRY(cudaMemcpyAsync(device_.get(), staging_.get(), staging_.size(), cudaMemcpyHostToDevice, s.get()));
}

void staged_buffer::to_host(stream_ref s) {
  if (!moves_out(dir_)) return;
  FERRY_CUDA_TRY(cudaMemcpyAsync(staging_.get(), device_.get(), staging_.size(), cudaMemcpyDeviceToHost, s.get()));
  if (capturing(s))
    FERRY_CUDA_TRY(cudaLaunchHostFunc(s.get(), run_host_copy, out_.get()));
  else
    out_pending_ = true;
}

void staged_buffer::finish_to_host() {
  if (!out_pending_) return;
  run_host_copy(out_.get());
  out_pending_ = false;
}

}  // namespace ferry::memory
