// registered-mapped: the caller's memory (or pageable memory standing in for it) registered with
// cudaHostRegister(Mapped); the device reads and writes it in place over the link.
#include <cuda_runtime_api.h>

#include "core/host_registration.hpp"
#include "core/mapped_device_pointer.hpp"
#include "core/pageable_memory.hpp"
#include "ferry/core/error.hpp"
#include "memory/alignment_check.hpp"
#include "memory/by_hand/in_place.hpp"
#include "memory/host_flags.hpp"
#include "memory/platform_needs.hpp"
#include "memory/strategy_type.hpp"
#include "memory/zero_copy_buffer.hpp"

namespace ferry::memory::strategies {
namespace {

// The buffer over `view`; `owned` holds the memory when ferry allocated it.
std::unique_ptr<buffer_body> registered_mapped_buffer(std::span<std::byte> view, core::pageable_memory owned) {
  auto registration = core::register_host(view, register_mapped_flags);
  void* device_view = core::mapped_device_pointer(view.data());
  require_device_alignment(device_view, "registered-mapped caller memory");
  return make_body(
      zero_copy_buffer(copy_buffer::registered_host{std::move(owned), std::move(registration)}, view, device_view));
}

class registered_mapped_strategy final : public strategy_type {
 public:
  registered_mapped_strategy()
      : strategy_type("registered-mapped",
                      {.path = data_path::zero_copy,
                       .wraps_caller_memory = true,
                       .reads_in_place = true,
                       .summary = "caller's memory + cudaHostRegister(Mapped); the device reads it in place"}) {}

  [[nodiscard]] std::optional<std::string> unavailable_reason(const device_caps& caps) const override {
    if (auto reason = needs_host_register(caps)) return reason;
    return needs_host_mapping(caps);
  }

  [[nodiscard]] std::unique_ptr<buffer_body> allocate(const buffer_request& request,
                                                      const device_caps& /*caps*/) const override {
    // No caller memory given: stand in for it with page-aligned pageable memory (as registered).
    auto owned = core::allocate_pageable(request.bytes);
    auto view = owned.span();
    return registered_mapped_buffer(view, std::move(owned));
  }

  [[nodiscard]] std::unique_ptr<buffer_body> wrap(std::span<std::byte> caller_memory, const buffer_request& /*request*/,
                                                  const device_caps& /*caps*/) const override {
    return registered_mapped_buffer(caller_memory, {});
  }

  [[nodiscard]] std::string_view recipe_steps() const noexcept override { return by_hand::in_place_steps; }

  [[nodiscard]] std::unique_ptr<tensor_by_hand> by_hand_tensor(std::size_t bytes, direction /*dir*/,
                                                               const device_caps& /*caps*/) const override {
    by_hand::in_place_memory m;
    m.pageable = core::allocate_pageable(bytes);
    const auto host = m.pageable.span();
    m.registration = core::register_host(host, cudaHostRegisterMapped | cudaHostRegisterPortable);
    void* device = nullptr;
    FERRY_CUDA_TRY(cudaHostGetDevicePointer(&device, host.data(), 0));
    return std::make_unique<by_hand::in_place_tensor>(std::move(m), host, device);
  }
};

}  // namespace

const strategy_type& registered_mapped() {
  static const registered_mapped_strategy type;
  return type;
}

}  // namespace ferry::memory::strategies
