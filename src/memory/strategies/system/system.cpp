// system: plain malloc'd memory the device reads and writes in place, where the platform lets it
// (pageableMemoryAccess=1: HMM, or ATS over NVLink-C2C).
#include "core/pageable_memory.hpp"
#include "memory/by_hand/in_place.hpp"
#include "memory/platform_needs.hpp"
#include "memory/strategy_type.hpp"
#include "memory/zero_copy_buffer.hpp"

namespace ferry::memory::strategies {
namespace {

class system_strategy final : public strategy_type {
 public:
  system_strategy()
      : strategy_type("system", {.path = data_path::zero_copy,
                                 .reads_in_place = true,
                                 .summary = "plain malloc read by the device through HMM/ATS (pageableMemoryAccess=1)",
                                 .host_in_gpu_span = "the GPU's faults on host pages are serviced by the kernel's HMM "
                                                     "on the CPU"}) {}

  [[nodiscard]] std::optional<std::string> unavailable_reason(const device_caps& caps) const override {
    return needs_pageable_memory_access(caps);
  }

  [[nodiscard]] std::unique_ptr<buffer_body> allocate(const buffer_request& request,
                                                      const device_caps& /*caps*/) const override {
    auto host = core::allocate_pageable(request.bytes);
    auto view = host.span();
    return make_body(zero_copy_buffer(std::move(host), view, view.data()));
  }

  [[nodiscard]] std::string_view recipe_steps() const noexcept override { return by_hand::in_place_steps; }

  [[nodiscard]] std::unique_ptr<tensor_by_hand> by_hand_tensor(std::size_t bytes, direction /*dir*/,
                                                               const device_caps& /*caps*/) const override {
    by_hand::in_place_memory m;
    m.pageable = core::allocate_pageable(bytes);
    const auto host = m.pageable.span();
    return std::make_unique<by_hand::in_place_tensor>(std::move(m), host, host.data());
  }
};

}  // namespace

const strategy_type& system() {
  static const system_strategy type;
  return type;
}

}  // namespace ferry::memory::strategies
