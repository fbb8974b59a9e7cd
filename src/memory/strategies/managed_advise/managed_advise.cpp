// managed-advise: cudaMallocManaged with preferred location host and accessed-by the GPU: pages
// stay on the host and the GPU reads them over the link, as mapped memory.
#include "memory/by_hand/managed.hpp"
#include "memory/managed_buffer.hpp"
#include "memory/platform_needs.hpp"
#include "memory/strategy_type.hpp"

namespace ferry::memory::strategies {
namespace {

class managed_advise_strategy final : public strategy_type {
 public:
  managed_advise_strategy()
      : strategy_type("managed-advise", {.path = data_path::migrate,
                                         .uses_managed_memory = true,
                                         .reads_in_place = true,
                                         .summary = "cudaMallocManaged + preferred location host + accessed-by GPU"}) {}

  [[nodiscard]] std::optional<std::string> unavailable_reason(const device_caps& caps) const override {
    return needs_concurrent_managed_memory(caps);
  }

  [[nodiscard]] std::unique_ptr<buffer_body> allocate(const buffer_request& request,
                                                      const device_caps& caps) const override {
    return make_body(managed_buffer(allocate_managed_within_free(name(), request, caps.ordinal), managed_mode::advise,
                                    request.dir, caps.ordinal));
  }

  [[nodiscard]] std::string_view recipe_steps() const noexcept override { return by_hand::advise_steps; }

  [[nodiscard]] std::unique_ptr<tensor_by_hand> by_hand_tensor(std::size_t bytes, direction /*dir*/,
                                                               const device_caps& caps) const override {
    return std::make_unique<by_hand::managed_tensor>(bytes, caps.ordinal, true, false);
  }
};

}  // namespace

const strategy_type& managed_advise() {
  static const managed_advise_strategy type;
  return type;
}

}  // namespace ferry::memory::strategies
