// managed, managed-prefetch and managed-advise by hand: one cudaMallocManaged allocation per
// tensor, steered with the runtime's own calls.
#pragma once

#include <span>
#include <string_view>
#include <utility>

#include <cuda_runtime_api.h>

#include "core/managed_memory.hpp"
#include "ferry/core/error.hpp"
#include "ferry/memory/buffer.hpp"
#include "memory/tensor_by_hand.hpp"

namespace ferry::memory::by_hand {

inline constexpr std::string_view fault_driven_steps = "engine on managed pages, migrated on fault, synchronize";
inline constexpr std::string_view prefetch_steps =
    "cudaMemPrefetchAsync of the inputs to the GPU, engine (outputs in host-preferred pages), synchronize";
inline constexpr std::string_view advise_steps = "engine on host-preferred pages accessed by the GPU, synchronize";

class managed_tensor final : public tensor_by_hand {
 public:
  // `host_resident`: advised to live in host pages the GPU (`ordinal`) reads over the link;
  // `prefetched`: moved to that GPU before the engine.
  managed_tensor(std::size_t bytes, int ordinal, bool host_resident, bool prefetched)
      : memory_(core::allocate_managed(bytes)), ordinal_(ordinal), prefetched_(prefetched) {
    if (host_resident) {
      FERRY_CUDA_TRY(cudaMemAdvise(memory_.get(), memory_.size(), cudaMemAdviseSetPreferredLocation, on_host()));
      FERRY_CUDA_TRY(cudaMemAdvise(memory_.get(), memory_.size(), cudaMemAdviseSetAccessedBy, on_device(ordinal)));
    }
  }

  [[nodiscard]] std::span<std::byte> host() noexcept override { return memory_.span(); }
  [[nodiscard]] void* device() const noexcept override { return memory_.get(); }

  void before_engine(stream_ref s) override {
    if (prefetched_)
      FERRY_CUDA_TRY(cudaMemPrefetchAsync(memory_.get(), memory_.span().size(), on_device(ordinal_), 0, s.get()));
  }

 private:
  static cudaMemLocation on_device(int ordinal) {
    cudaMemLocation l{};
    l.type = cudaMemLocationTypeDevice;
    l.id = ordinal;
    return l;
  }
  static cudaMemLocation on_host() {
    cudaMemLocation l{};
    l.type = cudaMemLocationTypeHost;
    return l;
  }

  core::managed_memory memory_;
  int ordinal_;
  bool prefetched_;
};

}  // namespace ferry::memory::by_hand
