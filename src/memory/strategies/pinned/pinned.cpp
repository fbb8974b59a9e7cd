// pinned: cudaMallocHost + cudaMalloc, DMA both ways.
#include "core/device_memory.hpp"
#include "core/pinned_memory.hpp"
#include "memory/by_hand/copied.hpp"
#include "memory/copy_buffer.hpp"
#include "memory/host_flags.hpp"
#include "memory/strategy_type.hpp"

namespace ferry::memory::strategies {
namespace {

class pinned_strategy final : public strategy_type {
 public:
  pinned_strategy()
      : strategy_type("pinned", {.path = data_path::copy, .summary = "cudaMallocHost + cudaMalloc; DMA both ways"}) {}

  [[nodiscard]] std::optional<std::string> unavailable_reason(const device_caps& /*caps*/) const override {
    return std::nullopt;
  }

  [[nodiscard]] std::unique_ptr<buffer_body> allocate(const buffer_request& request,
                                                      const device_caps& /*caps*/) const override {
    auto host = core::allocate_pinned(request.bytes, pinned_flags);
    auto view = host.span();
    return make_body(copy_buffer(std::move(host), view, core::allocate_device(request.bytes), request.dir));
  }

  [[nodiscard]] std::string_view recipe_steps() const noexcept override { return by_hand::copied_steps; }

  [[nodiscard]] std::unique_ptr<tensor_by_hand> by_hand_tensor(std::size_t bytes, direction /*dir*/,
                                                               const device_caps& /*caps*/) const override {
    by_hand::copied_memory m;
    m.pinned = core::allocate_pinned(bytes, cudaHostAllocPortable);
    const auto host = m.pinned.span();
    m.device = core::allocate_device(bytes);
    return std::make_unique<by_hand::copied_tensor>(std::move(m), host, nullptr);
  }
};

}  // namespace

const strategy_type& pinned() {
  static const pinned_strategy type;
  return type;
}

}  // namespace ferry::memory::strategies
