// pageable: malloc + cudaMalloc, cudaMemcpyAsync from pageable memory (the driver stages it).
#include "core/device_memory.hpp"
#include "core/pageable_memory.hpp"
#include "memory/by_hand/copied.hpp"
#include "memory/copy_buffer.hpp"
#include "memory/strategy_type.hpp"

namespace ferry::memory::strategies {
namespace {

class pageable_strategy final : public strategy_type {
 public:
  pageable_strategy()
      : strategy_type("pageable",
                      {.path = data_path::copy,
                       .summary = "malloc + cudaMalloc; cudaMemcpyAsync from pageable memory",
                       .host_in_gpu_span = "the driver copies pageable memory through its own pinned buffer with the "
                                           "CPU while the copy runs"}) {}

  [[nodiscard]] std::optional<std::string> unavailable_reason(const device_caps& /*caps*/) const override {
    return std::nullopt;
  }

  [[nodiscard]] std::unique_ptr<buffer_body> allocate(const buffer_request& request,
                                                      const device_caps& /*caps*/) const override {
    auto host = core::allocate_pageable(request.bytes);
    auto view = host.span();
    return make_body(copy_buffer(std::move(host), view, core::allocate_device(request.bytes), request.dir));
  }

  [[nodiscard]] std::string_view recipe_steps() const noexcept override { return by_hand::copied_steps; }

  [[nodiscard]] std::unique_ptr<tensor_by_hand> by_hand_tensor(std::size_t bytes, direction /*dir*/,
                                                               const device_caps& /*caps*/) const override {
    by_hand::copied_memory m;
    m.pageable = core::allocate_pageable(bytes);
    const auto host = m.pageable.span();
    m.device = core::allocate_device(bytes);
    return std::make_unique<by_hand::copied_tensor>(std::move(m), host, nullptr);
  }
};

}  // namespace

const strategy_type& pageable() {
  static const pageable_strategy type;
  return type;
}

}  // namespace ferry::memory::strategies
