// peer by hand: the engine alone on inputs in another GPU's memory, copied there after the CPU
// wrote them and outside the timing, with peer access enabled by the runtime's own call. Written
// apart from peer_buffer.hpp (they share only core's RAII owners), as every recipe is.
#pragma once

#include <string>

#include <cuda_runtime_api.h>

#include "core/device_memory.hpp"
#include "core/pinned_memory.hpp"
#include "ferry/core/error.hpp"
#include "memory/tensor_by_hand.hpp"

namespace ferry::memory::strategies {

class peer_tensor_by_hand final : public tensor_by_hand {
 public:
  // Device memory on `peer`, read by the current GPU, which is given access to it here.
  peer_tensor_by_hand(std::size_t bytes, int peer)
      : shadow_(core::allocate_pinned(bytes, cudaHostAllocPortable)), remote_(core::allocate_device(bytes, peer)) {
    const cudaError_t status = cudaDeviceEnablePeerAccess(peer, 0);
    if (status != cudaSuccess) (void)cudaGetLastError();  // not sticky: clear it for the next call
    if (status != cudaSuccess && status != cudaErrorPeerAccessAlreadyEnabled)
      throw unsupported("cudaDeviceEnablePeerAccess(" + std::to_string(peer) + "): " + cudaGetErrorString(status));
  }

  [[nodiscard]] std::span<std::byte> host() noexcept override { return shadow_.span(); }
  [[nodiscard]] void* device() const noexcept override { return remote_.get(); }

  void stage_untimed(stream_ref s) override {
    FERRY_CUDA_TRY(cudaMemcpyAsync(remote_.get(), shadow_.get(), shadow_.size(), cudaMemcpyDefault, s.get()));
  }
  void fetch_untimed(stream_ref s) override {
    FERRY_CUDA_TRY(cudaMemcpyAsync(shadow_.get(), remote_.get(), shadow_.size(), cudaMemcpyDefault, s.get()));
  }

 private:
  core::pinned_memory shadow_;
  core::device_memory remote_;
};

}  // namespace ferry::memory::strategies
