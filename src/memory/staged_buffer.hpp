// staged: the path of Triton and most servers. The caller's data sits in pageable memory; each
// transfer first memcpy's it into a pinned staging buffer, then DMAs from there.
//
// The CPU memcpy runs as a host function on the stream (cudaLaunchHostFunc), so both operations
// stay stream-ordered: the staging copy waits for earlier work on the stream, and the DMA (or,
// on the way back, the CPU's view) waits for the staging copy. It also makes the path capturable
// in a CUDA graph.
#pragma once

#include <memory>

#include "memory/allocations.hpp"
#include "memory/transfer_buffer.hpp"

namespace ferry::memory {

class staged_buffer {
 public:
  staged_buffer(pageable_memory host, pinned_memory staging, device_memory device, direction dir);

  [[nodiscard]] std::span<std::byte> host() noexcept { return host_.span(); }
  [[nodiscard]] void* device() const noexcept { return device_.get(); }
  void to_device(stream_ref s);
  void to_host(stream_ref s);

  // A CPU copy a host function performs; heap-held so its address survives moves of the buffer.
  struct host_copy {
    void* dst;
    const void* src;
    std::size_t bytes;
  };

 private:
  pageable_memory host_;
  pinned_memory staging_;
  device_memory device_;
  direction dir_;
  std::unique_ptr<host_copy> in_;   // host -> staging
  std::unique_ptr<host_copy> out_;  // staging -> host
};

static_assert(transfer_buffer<staged_buffer>);

}  // namespace ferry::memory
