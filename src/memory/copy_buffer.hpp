// pageable, pinned and registered: a host view and separate device memory, joined by
// cudaMemcpyAsync. The three differ only in what kind of host memory they hold.
#pragma once

#include <variant>

#include "core/device_memory.hpp"
#include "core/host_registration.hpp"
#include "core/pageable_memory.hpp"
#include "core/pinned_memory.hpp"
#include "memory/transfer_buffer.hpp"

namespace ferry::memory {

class copy_buffer {
 public:
  // Host memory the buffer copies from: owned pageable, owned pinned, or registered memory
  // (the caller's, or pageable memory the buffer allocated and registered itself).
  struct registered_host {
    core::pageable_memory owned;  // empty when the caller owns the memory
    core::host_registration registration;
  };
  using host_memory = std::variant<core::pageable_memory, core::pinned_memory, registered_host>;

  copy_buffer(host_memory host, std::span<std::byte> host_view, core::device_memory device, direction dir)
      : host_(std::move(host)), view_(host_view), device_(std::move(device)), dir_(dir) {}

  [[nodiscard]] std::span<std::byte> host() noexcept { return view_; }
  [[nodiscard]] void* device_address() const noexcept { return device_.get(); }
  void to_device(stream_ref s, std::size_t bytes);
  void to_host(stream_ref s, std::size_t bytes);

 private:
  host_memory host_;
  std::span<std::byte> view_;
  core::device_memory device_;
  direction dir_;
};

static_assert(transfer_buffer<copy_buffer>);

}  // namespace ferry::memory
