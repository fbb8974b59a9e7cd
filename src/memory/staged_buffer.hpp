// staged: the path of Triton and most servers. The caller's data sits in pageable memory; each
// transfer first memcpy's it into a pinned staging buffer, then DMAs from there.
//
// The CPU's copies run on the calling thread where they can: into staging as to_device is called
// (the slot is held by its caller and its last request is done, so the staging buffer is idle),
// and out of staging in finish_to_host, once the stream's work has completed. That is what a
// careful hand-written loop does; as host functions on the stream (cudaLaunchHostFunc) they cost
// a driver thread's wake-up each, and a 0.6 MB request took 2.3x its hand-written recipe. While a
// stream is being captured into a CUDA graph they do run as host functions, since a graph replay
// must make the copies itself.
#pragma once

#include <memory>
#include <vector>

#include "core/device_memory.hpp"
#include "core/pageable_memory.hpp"
#include "core/pinned_memory.hpp"
#include "memory/transfer_buffer.hpp"

namespace ferry::memory {

class staged_buffer {
 public:
  staged_buffer(core::pageable_memory host, core::pinned_memory staging, core::device_memory device, direction dir);

  [[nodiscard]] std::span<std::byte> host() noexcept { return host_.span(); }
  [[nodiscard]] void* device_address() const noexcept { return device_.get(); }
  void to_device(stream_ref s, std::size_t bytes);
  void to_host(stream_ref s, std::size_t bytes);
  // After to_host's stream work has completed: staging -> host view (nothing if to_host was
  // captured into a graph, whose host function made the copy).
  void finish_to_host();

  // A CPU copy a host function performs; heap-held so its address survives moves of the buffer.
  struct host_copy {
    void* dst;
    const void* src;
    std::size_t bytes;
  };

 private:
  // The copy of `bytes` from `src` to `dst` that a graph's host function makes: one per size
  // captured (a graph per batch size), kept for the buffer's life since a graph may replay it.
  host_copy* captured_copy(void* dst, const void* src, std::size_t bytes);

  core::pageable_memory host_;
  core::pinned_memory staging_;
  core::device_memory device_;
  direction dir_;
  std::vector<std::unique_ptr<host_copy>> captured_;
  std::size_t out_pending_ = 0;  // bytes to_host left to finish_to_host (staging -> host)
};

static_assert(transfer_buffer<staged_buffer>);

}  // namespace ferry::memory
