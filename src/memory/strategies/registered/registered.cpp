// registered: the caller's memory (or pageable memory standing in for it) page-locked with
// cudaHostRegister, DMA'd into device memory.
#include "core/device_memory.hpp"
#include "core/host_registration.hpp"
#include "core/pageable_memory.hpp"
#include "memory/by_hand/copied.hpp"
#include "memory/copy_buffer.hpp"
#include "memory/host_flags.hpp"
#include "memory/platform_needs.hpp"
#include "memory/strategy_type.hpp"

namespace ferry::memory::strategies {
namespace {

// The buffer over `view`; `owned` holds the memory when ferry allocated it.
std::unique_ptr<buffer_body> registered_buffer(std::span<std::byte> view, core::pageable_memory owned,
                                               const buffer_request& request) {
  auto registration = core::register_host(view, register_flags);
  return make_body(copy_buffer(copy_buffer::registered_host{std::move(owned), std::move(registration)}, view,
                               core::allocate_device(request.bytes), request.dir));
}

class registered_strategy final : public strategy_type {
 public:
  registered_strategy()
      : strategy_type("registered", {.path = data_path::copy,
                                     .wraps_caller_memory = true,
                                     .summary = "caller's memory + cudaHostRegister; DMA into device memory"}) {}

  [[nodiscard]] std::optional<std::string> unavailable_reason(const device_caps& caps) const override {
    return needs_host_register(caps);
  }

  [[nodiscard]] std::unique_ptr<buffer_body> allocate(const buffer_request& request,
                                                      const device_caps& /*caps*/) const override {
    // No caller memory given: stand in for it with page-aligned pageable memory, which is what a
    // decoder or a shared-memory region would hand over.
    auto owned = core::allocate_pageable(request.bytes);
    auto view = owned.span();
    return registered_buffer(view, std::move(owned), request);
  }

  [[nodiscard]] std::unique_ptr<buffer_body> wrap(std::span<std::byte> caller_memory, const buffer_request& request,
                                                  const device_caps& /*caps*/) const override {
    return registered_buffer(caller_memory, {}, request);
  }

  [[nodiscard]] std::string_view recipe_steps() const noexcept override { return by_hand::copied_steps; }

  [[nodiscard]] std::unique_ptr<tensor_by_hand> by_hand_tensor(std::size_t bytes, direction /*dir*/,
                                                               const device_caps& /*caps*/) const override {
    by_hand::copied_memory m;
    m.pageable = core::allocate_pageable(bytes);
    m.registration = core::register_host(m.pageable.span(), cudaHostRegisterPortable);
    const auto host = m.pageable.span();
    m.device = core::allocate_device(bytes);
    return std::make_unique<by_hand::copied_tensor>(std::move(m), host, nullptr);
  }
};

}  // namespace

const strategy_type& registered() {
  static const registered_strategy type;
  return type;
}

}  // namespace ferry::memory::strategies
