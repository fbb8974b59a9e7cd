// staged: the path of Triton and most servers: the caller's data in pageable memory, memcpy'd by
// the CPU into a pinned staging buffer, then DMA'd from there (memory/staged_buffer.hpp).
#include "core/device_memory.hpp"
#include "core/pageable_memory.hpp"
#include "core/pinned_memory.hpp"
#include "memory/by_hand/copied.hpp"
#include "memory/host_flags.hpp"
#include "memory/staged_buffer.hpp"
#include "memory/strategy_type.hpp"

namespace ferry::memory::strategies {
namespace {

class staged_strategy final : public strategy_type {
 public:
  staged_strategy()
      : strategy_type("staged", {.path = data_path::copy,
                                 .summary = "malloc + pinned staging + cudaMalloc; memcpy to staging, then DMA (most "
                                            "servers)",
                                 .host_in_gpu_span = "the CPU's memcpy into the staging buffer comes between the "
                                                     "request's first event and its DMA"}) {}

  [[nodiscard]] std::optional<std::string> unavailable_reason(const device_caps& /*caps*/) const override {
    return std::nullopt;
  }

  [[nodiscard]] std::unique_ptr<buffer_body> allocate(const buffer_request& request,
                                                      const device_caps& /*caps*/) const override {
    const std::size_t n = request.bytes;
    return make_body(staged_buffer(core::allocate_pageable(n), core::allocate_pinned(n, pinned_flags),
                                   core::allocate_device(n), request.dir));
  }

  [[nodiscard]] std::string_view recipe_steps() const noexcept override { return by_hand::staged_steps; }

  [[nodiscard]] std::unique_ptr<tensor_by_hand> by_hand_tensor(std::size_t bytes, direction /*dir*/,
                                                               const device_caps& /*caps*/) const override {
    by_hand::copied_memory m;
    m.pageable = core::allocate_pageable(bytes);
    m.pinned = core::allocate_pinned(bytes, cudaHostAllocPortable);  // the staging buffer
    const auto host = m.pageable.span();
    void* staging = m.pinned.get();
    m.device = core::allocate_device(bytes);
    return std::make_unique<by_hand::copied_tensor>(std::move(m), host, staging);
  }
};

}  // namespace

const strategy_type& staged() {
  static const staged_strategy type;
  return type;
}

}  // namespace ferry::memory::strategies
