// mapped: cudaHostAlloc(Mapped); the device reads and writes host memory in place over the link.
#include <cuda_runtime_api.h>

#include "core/mapped_device_pointer.hpp"
#include "core/pinned_memory.hpp"
#include "ferry/core/error.hpp"
#include "memory/by_hand/in_place.hpp"
#include "memory/host_flags.hpp"
#include "memory/platform_needs.hpp"
#include "memory/strategy_type.hpp"
#include "memory/zero_copy_buffer.hpp"

namespace ferry::memory::strategies {
namespace {

class mapped_strategy final : public strategy_type {
 public:
  mapped_strategy()
      : strategy_type("mapped",
                      {.path = data_path::zero_copy,
                       .reads_in_place = true,
                       .summary = "cudaHostAlloc(Mapped); the device reads and writes host memory over the link"}) {}

  [[nodiscard]] std::optional<std::string> unavailable_reason(const device_caps& caps) const override {
    return needs_host_mapping(caps);
  }

  [[nodiscard]] std::unique_ptr<buffer_body> allocate(const buffer_request& request,
                                                      const device_caps& /*caps*/) const override {
    auto host = core::allocate_pinned(request.bytes, mapped_flags);
    auto view = host.span();
    void* device_view = core::mapped_device_pointer(host.get());
    return make_body(zero_copy_buffer(std::move(host), view, device_view));
  }

  [[nodiscard]] std::string_view recipe_steps() const noexcept override { return by_hand::in_place_steps; }

  [[nodiscard]] std::unique_ptr<tensor_by_hand> by_hand_tensor(std::size_t bytes, direction /*dir*/,
                                                               const device_caps& /*caps*/) const override {
    by_hand::in_place_memory m;
    m.pinned = core::allocate_pinned(bytes, cudaHostAllocMapped | cudaHostAllocPortable);
    const auto host = m.pinned.span();
    void* device = nullptr;
    FERRY_CUDA_TRY(cudaHostGetDevicePointer(&device, m.pinned.get(), 0));
    return std::make_unique<by_hand::in_place_tensor>(std::move(m), host, device);
  }
};

}  // namespace

const strategy_type& mapped() {
  static const mapped_strategy type;
  return type;
}

}  // namespace ferry::memory::strategies
