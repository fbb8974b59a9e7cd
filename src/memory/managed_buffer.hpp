// managed, managed-prefetch and managed-advise: one cudaMallocManaged allocation whose host view
// and device address are the same pointer; they differ in how pages are steered.
#pragma once

#include <string_view>

#include "core/managed_memory.hpp"
#include "ferry/memory/buffer.hpp"
#include "memory/transfer_buffer.hpp"

namespace ferry::memory {

enum class managed_mode {
  fault_driven,  // no hints: the first touch on either side migrates pages on fault
  prefetch,      // inputs prefetched to the GPU before compute; outputs written to host pages
  advise,        // pages live on the host; the GPU maps them and reads over the link
};

// How the prefetch mode steers each direction, and why (a hand-written loop outside ferry,
// scripts/probes/managed_paths.cu; the figures are in docs/RESULTS.md, "Unified memory with
// prefetch, at its best"):
//  - inputs: cudaMemPrefetchAsync to the GPU after the CPU wrote them, in stream order before the
//    engine: the classic recipe.
//  - outputs: preferred location host + accessed-by GPU, never prefetched. Prefetching an output
//    to the GPU before the engine costs a fixed price even for a few KB (its pages sit on the CPU,
//    which just read them), and prefetching it back to the CPU runs far below the link's speed,
//    while the GPU writing straight into host pages, which the CPU then reads locally, is
//    cheaper. A careful user steers outputs so; the classic "both ways" is measurably worse.
//  - inout tensors keep the classic round trip: the engine reads and writes them.
class managed_buffer {
 public:
  // Applies the mode's advice right away; `ordinal` is the device that will run.
  managed_buffer(core::managed_memory memory, managed_mode mode, direction dir, int ordinal);

  [[nodiscard]] std::span<std::byte> host() noexcept { return memory_.span(); }
  [[nodiscard]] void* device_address() const noexcept { return memory_.get(); }
  // prefetch: moves input (and inout) pages to the device. Nothing for the other modes.
  void to_device(stream_ref s, std::size_t bytes);
  // prefetch: moves inout pages back to the CPU. Nothing for the other modes and directions.
  void to_host(stream_ref s, std::size_t bytes);

 private:
  core::managed_memory memory_;
  managed_mode mode_;
  direction dir_;
  int ordinal_;
};

static_assert(transfer_buffer<managed_buffer>);

// A managed allocation of request.bytes for one tensor of `strategy`, on GPU `ordinal`: refused
// (unsupported, naming the strategy) where it would not fit the device's free memory and
// request.managed_policy does not allow oversubscription.
[[nodiscard]] core::managed_memory allocate_managed_within_free(std::string_view strategy,
                                                                const buffer_request& request, int ordinal);

}  // namespace ferry::memory
