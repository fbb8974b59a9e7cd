// managed, managed-prefetch and managed-advise: one cudaMallocManaged allocation whose host view
// and device address are the same pointer; they differ in how pages are steered.
#pragma once

#include "core/managed_memory.hpp"
#include "memory/transfer_buffer.hpp"

namespace ferry::memory {

enum class managed_mode {
  fault_driven,  // no hints: the first touch on either side migrates pages on fault
  prefetch,      // inputs prefetched to the GPU before compute; outputs written to host pages
  advise,        // pages live on the host; the GPU maps them and reads over the link
};

// How the prefetch mode steers each direction, and why (measured on an H200 over PCIe Gen5, a
// hand-written loop outside ferry, scripts/probes/managed_paths.cu):
//  - inputs: cudaMemPrefetchAsync to the GPU after the CPU wrote them, in stream order before the
//    engine: the classic recipe (19 MB at 33-37 GB/s, 64 MB at 47 GB/s).
//  - outputs: preferred location host + accessed-by GPU, never prefetched. Prefetching an output
//    to the GPU before the engine costs a fixed 80-280 us even for 4 KB (its pages sit on the CPU,
//    which just read them), and prefetching it back to the CPU runs at ~5 GB/s; a 19 MB output
//    took 7.5 ms both ways against 4.9 ms written by the GPU straight into host pages, which the
//    CPU then reads locally. A careful user steers outputs so; the classic "both ways" is
//    measurably worse.
//  - inout tensors keep the classic round trip: the engine reads and writes them.
class managed_buffer {
 public:
  // Applies the mode's advice right away; `ordinal` is the device that will run.
  managed_buffer(core::managed_memory memory, managed_mode mode, direction dir, int ordinal);

  [[nodiscard]] std::span<std::byte> host() noexcept { return memory_.span(); }
  [[nodiscard]] void* device() const noexcept { return memory_.get(); }
  // prefetch: moves input (and inout) pages to the device. Nothing for the other modes.
  void to_device(stream_ref s);
  // prefetch: moves inout pages back to the CPU. Nothing for the other modes and directions.
  void to_host(stream_ref s);

 private:
  core::managed_memory memory_;
  managed_mode mode_;
  direction dir_;
  int ordinal_;
};

static_assert(transfer_buffer<managed_buffer>);

}  // namespace ferry::memory
