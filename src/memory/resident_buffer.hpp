// device: the data already lives in device memory (written there by an earlier stage, or copied
// once outside any timing). Its stream operations move nothing; a pinned shadow on the host is
// synchronised only by the explicit blocking calls, which benchmarks keep outside their timing.
#pragma once

#include "core/device_memory.hpp"
#include "core/pinned_memory.hpp"
#include "memory/transfer_buffer.hpp"

namespace ferry::memory {

class resident_buffer {
 public:
  resident_buffer(core::pinned_memory shadow, core::device_memory device)
      : shadow_(std::move(shadow)), device_(std::move(device)) {}

  [[nodiscard]] std::span<std::byte> host() noexcept { return shadow_.span(); }
  [[nodiscard]] void* device_address() const noexcept { return device_.get(); }
  void to_device(stream_ref /*unused*/, std::size_t /*unused*/) noexcept {}
  void to_host(stream_ref /*unused*/, std::size_t /*unused*/) noexcept {}

  void upload(stream_ref s, std::size_t bytes) {
    FERRY_CUDA_TRY(cudaMemcpyAsync(device_.get(), shadow_.get(), bytes, cudaMemcpyHostToDevice, s.get()));
  }
  void download(stream_ref s, std::size_t bytes) {
    FERRY_CUDA_TRY(cudaMemcpyAsync(shadow_.get(), device_.get(), bytes, cudaMemcpyDeviceToHost, s.get()));
  }

 private:
  core::pinned_memory shadow_;
  core::device_memory device_;
};

static_assert(transfer_buffer<resident_buffer>);

}  // namespace ferry::memory
