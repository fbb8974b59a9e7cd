// pageable, pinned, registered and staged by hand: cudaMemcpyAsync of an input before the engine
// and of an output after it, on the recipe's one stream; staged adds the CPU's memcpy into pinned
// staging before its copy in and out of it after the synchronize.
#pragma once

#include <cstring>
#include <span>
#include <string_view>
#include <utility>

#include <cuda_runtime_api.h>

#include "core/device_memory.hpp"
#include "core/host_registration.hpp"
#include "core/pageable_memory.hpp"
#include "core/pinned_memory.hpp"
#include "ferry/core/error.hpp"
#include "memory/tensor_by_hand.hpp"

namespace ferry::memory::by_hand {

inline constexpr std::string_view copied_steps = "cudaMemcpyAsync in, engine, cudaMemcpyAsync out, synchronize";
inline constexpr std::string_view staged_steps =
    "memcpy into pinned staging, cudaMemcpyAsync in, engine, cudaMemcpyAsync out, synchronize, "
    "memcpy out of staging";

// What a copied tensor holds. Members are released in reverse order: the device memory, then a
// registration before the memory it registers.
struct copied_memory {
  core::pageable_memory pageable;
  core::pinned_memory pinned;  // the host memory (pinned) or the staging buffer (staged)
  core::host_registration registration;
  core::device_memory device;
};

class copied_tensor final : public tensor_by_hand {
 public:
  // `host`: where the CPU writes and reads, inside `memory`; `staging`: the pinned buffer the
  // copies go through, or nullptr to copy from `host` itself.
  copied_tensor(copied_memory memory, std::span<std::byte> host, void* staging)
      : memory_(std::move(memory)), host_(host), staging_(staging) {}

  [[nodiscard]] std::span<std::byte> host() noexcept override { return host_; }
  [[nodiscard]] void* device() const noexcept override { return memory_.device.get(); }

  void before_engine(stream_ref s) override {
    const void* source = host_.data();
    if (staging_ != nullptr) {
      std::memcpy(staging_, host_.data(), host_.size());
      source = staging_;
    }
    FERRY_CUDA_TRY(cudaMemcpyAsync(memory_.device.get(), source, host_.size(), cudaMemcpyHostToDevice, s.get()));
  }
  void after_engine(stream_ref s) override {
    void* destination = staging_ != nullptr ? staging_ : static_cast<void*>(host_.data());
    FERRY_CUDA_TRY(cudaMemcpyAsync(destination, memory_.device.get(), host_.size(), cudaMemcpyDeviceToHost, s.get()));
  }
  void after_synchronize() override {
    if (staging_ != nullptr) std::memcpy(host_.data(), staging_, host_.size());
  }

 private:
  copied_memory memory_;
  std::span<std::byte> host_;
  void* staging_;
};

}  // namespace ferry::memory::by_hand
