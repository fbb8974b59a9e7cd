// device by hand, the floor: the engine alone on inputs in device memory, copied there after the
// CPU wrote them and outside the timing (and outputs copied back outside it, for a check).
#pragma once

#include <span>
#include <string_view>

#include <cuda_runtime_api.h>

#include "core/device_memory.hpp"
#include "core/pinned_memory.hpp"
#include "ferry/core/error.hpp"
#include "memory/tensor_by_hand.hpp"

namespace ferry::memory::by_hand {

inline constexpr std::string_view resident_steps = "engine on inputs already in device memory, synchronize";

class resident_tensor final : public tensor_by_hand {
 public:
  explicit resident_tensor(std::size_t bytes)
      : shadow_(core::allocate_pinned(bytes, cudaHostAllocPortable)), device_(core::allocate_device(bytes)) {}

  [[nodiscard]] std::span<std::byte> host() noexcept override { return shadow_.span(); }
  [[nodiscard]] void* device() const noexcept override { return device_.get(); }

  void stage_untimed(stream_ref s) override {
    FERRY_CUDA_TRY(cudaMemcpyAsync(device_.get(), shadow_.get(), shadow_.size(), cudaMemcpyHostToDevice, s.get()));
  }
  void fetch_untimed(stream_ref s) override {
    FERRY_CUDA_TRY(cudaMemcpyAsync(shadow_.get(), device_.get(), shadow_.size(), cudaMemcpyDeviceToHost, s.get()));
  }

 private:
  core::pinned_memory shadow_;  // where the CPU writes inputs and a check reads outputs
  core::device_memory device_;
};

}  // namespace ferry::memory::by_hand
