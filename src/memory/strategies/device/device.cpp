// device: the data already lives in this GPU's memory (written there by an earlier stage, or
// copied once outside any timing): the floor every other strategy is measured against.
#include "core/device_memory.hpp"
#include "core/pinned_memory.hpp"
#include "memory/by_hand/resident.hpp"
#include "memory/host_flags.hpp"
#include "memory/resident_buffer.hpp"
#include "memory/strategy_type.hpp"

namespace ferry::memory::strategies {
namespace {

class device_strategy final : public strategy_type {
 public:
  device_strategy()
      : strategy_type("device",
                      {.path = data_path::resident,
                       .summary = "device-resident data, copied outside timing: the floor to measure against"}) {}

  [[nodiscard]] std::optional<std::string> unavailable_reason(const device_caps& /*caps*/) const override {
    return std::nullopt;
  }

  [[nodiscard]] std::unique_ptr<buffer_body> allocate(const buffer_request& request,
                                                      const device_caps& /*caps*/) const override {
    return make_body(
        resident_buffer(core::allocate_pinned(request.bytes, pinned_flags), core::allocate_device(request.bytes)));
  }

  [[nodiscard]] std::string_view recipe_steps() const noexcept override { return by_hand::resident_steps; }

  [[nodiscard]] std::unique_ptr<tensor_by_hand> by_hand_tensor(std::size_t bytes, direction /*dir*/,
                                                               const device_caps& /*caps*/) const override {
    return std::make_unique<by_hand::resident_tensor>(bytes);
  }
};

}  // namespace

const strategy_type& device() {
  static const device_strategy type;
  return type;
}

}  // namespace ferry::memory::strategies
