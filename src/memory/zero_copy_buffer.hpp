// mapped, registered-mapped and system: the device accesses the host memory in place, so the
// stream operations move nothing; every device access crosses the link instead.
#pragma once

#include <variant>

#include "core/pageable_memory.hpp"
#include "core/pinned_memory.hpp"
#include "memory/copy_buffer.hpp"
#include "memory/transfer_buffer.hpp"

namespace ferry::memory {

class zero_copy_buffer {
 public:
  // mapped: pinned+mapped allocation; registered-mapped: a registration (of caller or owned
  // memory); system: plain pageable memory reached through HMM/ATS.
  using host_memory = std::variant<core::pinned_memory, copy_buffer::registered_host, core::pageable_memory>;

  zero_copy_buffer(host_memory host, std::span<std::byte> host_view, void* device_view)
      : host_(std::move(host)), view_(host_view), device_view_(device_view) {}

  [[nodiscard]] std::span<std::byte> host() noexcept { return view_; }
  [[nodiscard]] void* device_address() const noexcept { return device_view_; }
  void to_device(stream_ref /*unused*/, std::size_t /*unused*/) noexcept {}
  void to_host(stream_ref /*unused*/, std::size_t /*unused*/) noexcept {}

 private:
  host_memory host_;
  std::span<std::byte> view_;
  void* device_view_;
};

static_assert(transfer_buffer<zero_copy_buffer>);

}  // namespace ferry::memory
