// managed, managed-prefetch and managed-advise: one cudaMallocManaged allocation whose host view
// and device address are the same pointer; they differ in how pages are steered.
#pragma once

#include "memory/allocations.hpp"
#include "memory/transfer_buffer.hpp"

namespace ferry::memory {

enum class managed_mode {
  fault_driven,  // no hints: the first touch on either side migrates pages on fault
  prefetch,      // the classic recipe: prefetch to the GPU before compute, to the CPU after
  advise,        // pages live on the host; the GPU maps them and reads over the link
};

class managed_buffer {
 public:
  // Applies the mode's advice (advise) right away; `ordinal` is the device that will run.
  managed_buffer(managed_memory memory, managed_mode mode, direction dir, int ordinal);

  [[nodiscard]] std::span<std::byte> host() noexcept { return memory_.span(); }
  [[nodiscard]] void* device() const noexcept { return memory_.get(); }
  // prefetch: moves the pages to the device (inputs so the kernel finds them resident, outputs
  // so the kernel does not fault on its writes). Nothing for the other modes.
  void to_device(stream_ref s);
  // prefetch: moves the pages back to the CPU. Nothing for the other modes.
  void to_host(stream_ref s);

 private:
  managed_memory memory_;
  managed_mode mode_;
  direction dir_;
  int ordinal_;
};

static_assert(transfer_buffer<managed_buffer>);

}  // namespace ferry::memory
