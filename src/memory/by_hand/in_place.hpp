// mapped, registered-mapped and system by hand: the engine is bound to host memory and reads and
// writes it over the link while it runs; nothing moves before or after it.
#pragma once

#include <span>
#include <string_view>
#include <utility>

#include "core/host_registration.hpp"
#include "core/pageable_memory.hpp"
#include "core/pinned_memory.hpp"
#include "memory/tensor_by_hand.hpp"

namespace ferry::memory::by_hand {

inline constexpr std::string_view in_place_steps = "engine on host memory read and written in place, synchronize";

// What an in-place tensor holds; a registration is released before the memory it registers.
struct in_place_memory {
  core::pageable_memory pageable;
  core::pinned_memory pinned;
  core::host_registration registration;
};

class in_place_tensor final : public tensor_by_hand {
 public:
  // `host`: the CPU's view of the memory; `device`: the address the engine reads it by.
  in_place_tensor(in_place_memory memory, std::span<std::byte> host, void* device)
      : memory_(std::move(memory)), host_(host), device_(device) {}

  [[nodiscard]] std::span<std::byte> host() noexcept override { return host_; }
  [[nodiscard]] void* device() const noexcept override { return device_; }

 private:
  in_place_memory memory_;
  std::span<std::byte> host_;
  void* device_;
};

}  // namespace ferry::memory::by_hand
