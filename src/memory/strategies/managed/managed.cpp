// managed: cudaMallocManaged with no hints; pages migrate on fault, on the GPU's first touch and
// on the CPU's.
#include "memory/by_hand/managed.hpp"
#include "memory/managed_buffer.hpp"
#include "memory/platform_needs.hpp"
#include "memory/strategy_type.hpp"

namespace ferry::memory::strategies {
namespace {

class managed_strategy final : public strategy_type {
 public:
  managed_strategy()
      : strategy_type("managed", {.path = data_path::migrate,
                                  .uses_managed_memory = true,
                                  .summary = "cudaMallocManaged, no hints; pages migrate on fault",
                                  .host_in_gpu_span = "the GPU's page faults are serviced by the driver on the CPU"}) {}

  [[nodiscard]] std::optional<std::string> unavailable_reason(const device_caps& caps) const override {
    return needs_concurrent_managed_memory(caps);
  }

  [[nodiscard]] std::unique_ptr<buffer_body> allocate(const buffer_request& request,
                                                      const device_caps& caps) const override {
    return make_body(managed_buffer(allocate_managed_within_free(name(), request, caps.ordinal),
                                    managed_mode::fault_driven, request.dir, caps.ordinal));
  }

  [[nodiscard]] std::string_view recipe_steps() const noexcept override { return by_hand::fault_driven_steps; }

  [[nodiscard]] std::unique_ptr<tensor_by_hand> by_hand_tensor(std::size_t bytes, direction /*dir*/,
                                                               const device_caps& caps) const override {
    return std::make_unique<by_hand::managed_tensor>(bytes, caps.ordinal, false, false);
  }
};

}  // namespace

const strategy_type& managed() {
  static const managed_strategy type;
  return type;
}

}  // namespace ferry::memory::strategies
