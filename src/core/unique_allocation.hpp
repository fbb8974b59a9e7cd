// Move-only owner of one raw allocation (or registration) released by a given function. Keeps
// the CUDA memory owners beside it (pageable, pinned, device, managed, host registration) short.
#pragma once

#include <cstddef>
#include <span>
#include <utility>

namespace ferry::core {

template <auto Free>
class unique_allocation {
 public:
  unique_allocation() = default;
  unique_allocation(void* ptr, std::size_t bytes) noexcept : ptr_(ptr), bytes_(bytes) {}
  ~unique_allocation() {
    if (ptr_ != nullptr) Free(ptr_);
  }
  unique_allocation(unique_allocation&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  unique_allocation& operator=(unique_allocation&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  unique_allocation(const unique_allocation&) = delete;
  unique_allocation& operator=(const unique_allocation&) = delete;

  [[nodiscard]] void* get() const noexcept { return ptr_; }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }
  [[nodiscard]] std::span<std::byte> span() const noexcept { return {static_cast<std::byte*>(ptr_), bytes_}; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace ferry::core
