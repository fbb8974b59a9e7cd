// peer's buffer: the tensor lives in another GPU's memory, which the engine reads and writes over
// peer access. As for `device`, its stream operations move nothing (the data is where the engine
// reads it, by definition); a pinned shadow on the host is synchronised only by the blocking
// calls, which benchmarks keep outside their timing.
#pragma once

#include <cuda_runtime_api.h>

#include "core/device_memory.hpp"
#include "core/pinned_memory.hpp"
#include "ferry/core/error.hpp"
#include "memory/transfer_buffer.hpp"

namespace ferry::memory::strategies {

class peer_buffer {
 public:
  // `remote`: device memory of the peer GPU, which the buffer's own GPU has peer access to.
  peer_buffer(core::pinned_memory shadow, core::device_memory remote)
      : shadow_(std::move(shadow)), remote_(std::move(remote)) {}

  [[nodiscard]] std::span<std::byte> host() noexcept { return shadow_.span(); }
  [[nodiscard]] void* device_address() const noexcept { return remote_.get(); }
  void to_device(stream_ref /*unused*/, std::size_t /*unused*/) noexcept {}
  void to_host(stream_ref /*unused*/, std::size_t /*unused*/) noexcept {}

  // The copies name no direction: the runtime finds the peer GPU's memory by its address.
  void upload(stream_ref s, std::size_t bytes) {
    FERRY_CUDA_TRY(cudaMemcpyAsync(remote_.get(), shadow_.get(), bytes, cudaMemcpyDefault, s.get()));
  }
  void download(stream_ref s, std::size_t bytes) {
    FERRY_CUDA_TRY(cudaMemcpyAsync(shadow_.get(), remote_.get(), bytes, cudaMemcpyDefault, s.get()));
  }

 private:
  core::pinned_memory shadow_;
  core::device_memory remote_;
};

static_assert(transfer_buffer<peer_buffer>);

}  // namespace ferry::memory::strategies
