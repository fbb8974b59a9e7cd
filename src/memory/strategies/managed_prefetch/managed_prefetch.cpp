// managed-prefetch: cudaMallocManaged; inputs prefetched to the GPU in stream order before the
// engine, outputs advised to host pages the GPU writes over the link (memory/managed_buffer.hpp
// says why not both ways).
#include "memory/by_hand/managed.hpp"
#include "memory/managed_buffer.hpp"
#include "memory/platform_needs.hpp"
#include "memory/strategy_type.hpp"

namespace ferry::memory::strategies {
namespace {

class managed_prefetch_strategy final : public strategy_type {
 public:
  managed_prefetch_strategy()
      : strategy_type("managed-prefetch",
                      {.path = data_path::migrate,
                       .uses_managed_memory = true,
                       .summary = "cudaMallocManaged; inputs cudaMemPrefetchAsync'd to the GPU before the engine, "
                                  "outputs advised to host pages the GPU writes over the link",
                       .host_in_gpu_span = "the driver unmaps the prefetched pages from the host on the CPU before "
                                           "they move"}) {}

  [[nodiscard]] std::optional<std::string> unavailable_reason(const device_caps& caps) const override {
    return needs_concurrent_managed_memory(caps);
  }

  [[nodiscard]] std::unique_ptr<buffer_body> allocate(const buffer_request& request,
                                                      const device_caps& caps) const override {
    // Prefetches and advice target the buffer's own GPU (caps.ordinal), never device 0: on a
    // multi-GPU host each replica's pages must end up where it computes.
    return make_body(managed_buffer(allocate_managed_within_free(name(), request, caps.ordinal), managed_mode::prefetch,
                                    request.dir, caps.ordinal));
  }

  [[nodiscard]] std::string_view recipe_steps() const noexcept override { return by_hand::prefetch_steps; }

  [[nodiscard]] std::unique_ptr<tensor_by_hand> by_hand_tensor(std::size_t bytes, direction dir,
                                                               const device_caps& caps) const override {
    // Outputs stay in host pages the GPU writes; inputs move to the GPU before the engine.
    return std::make_unique<by_hand::managed_tensor>(bytes, caps.ordinal, dir == direction::output,
                                                     dir == direction::input);
  }
};

}  // namespace

const strategy_type& managed_prefetch() {
  static const managed_prefetch_strategy type;
  return type;
}

}  // namespace ferry::memory::strategies
