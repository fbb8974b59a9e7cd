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
    : host_(std::move(host)), staging_(std::move(staging)), device_(std::move(device)), dir_(dir) {}

staged_buffer::host_copy* staged_buffer::captured_copy(void* dst, const void* src, std::size_t bytes) {
  for (const auto& c : captured_)
    if (c->dst == dst && c->src == src && c->bytes == bytes) return c.get();
  return captured_.emplace_back(std::make_unique<host_copy>(host_copy{dst, src, bytes})).get();
}

void staged_buffer::to_device(stream_ref s, std::size_t bytes) {
  if (!moves_in(dir_)) return;
  if (capturing(s)) {
    FERRY_CUDA_TRY(cudaLaunchHostFunc(s.get(), run_host_copy, captured_copy(staging_.get(), host_.get(), bytes)));
  } else {
    std::memcpy(staging_.get(), host_.get(), bytes);
  }
  FERRY_CUDA_TRY(cudaMemcpyAsync(device_.get(), staging_.get(), bytes, cudaMemcpyHostToDevice, s.get()));
}

void staged_buffer::to_host(stream_ref s, std::size_t bytes) {
  if (!moves_out(dir_)) return;
  FERRY_CUDA_TRY(cudaMemcpyAsync(staging_.get(), device_.get(), bytes, cudaMemcpyDeviceToHost, s.get()));
  if (capturing(s))
    FERRY_CUDA_TRY(cudaLaunchHostFunc(s.get(), run_host_copy, captured_copy(host_.get(), staging_.get(), bytes)));
  else
    out_pending_ = bytes;
}

void staged_buffer::finish_to_host() {
  if (out_pending_ == 0) return;
  std::memcpy(host_.get(), staging_.get(), out_pending_);
  out_pending_ = 0;
}

}  // namespace ferry::memory
