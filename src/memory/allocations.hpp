// RAII owners for the raw memory the strategies are built from. Each owns exactly one
// allocation (or registration), is move-only, and never throws from its destructor.
#pragma once

#include <cstddef>
#include <span>
#include <utility>

#include <cuda_runtime_api.h>

namespace ferry::memory {

// Sets the current device for the lifetime of the guard and restores the previous one.
class scoped_device {
 public:
  explicit scoped_device(int ordinal);
  ~scoped_device();
  scoped_device(const scoped_device&) = delete;
  scoped_device& operator=(const scoped_device&) = delete;

 private:
  int previous_ = -1;
};

// Move-only owner of a pointer released by Free. Keeps the five allocation types below short.
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
  [[nodiscard]] std::span<std::byte> span() const noexcept {
    return {static_cast<std::byte*>(ptr_), bytes_};
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

void free_pageable(void* p) noexcept;
void free_pinned(void* p) noexcept;
void free_device(void* p) noexcept;
void free_managed(void* p) noexcept;
void unregister_host(void* p) noexcept;

using pageable_memory = unique_allocation<free_pageable>;  // page-aligned malloc
using pinned_memory = unique_allocation<free_pinned>;      // cudaHostAlloc
using device_memory = unique_allocation<free_device>;      // cudaMalloc
using managed_memory = unique_allocation<free_managed>;    // cudaMallocManaged
using host_registration = unique_allocation<unregister_host>;  // cudaHostRegister of caller memory

// Page-aligned so it can also be registered and so the device sees 256-byte-aligned addresses.
[[nodiscard]] pageable_memory allocate_pageable(std::size_t bytes);
[[nodiscard]] pinned_memory allocate_pinned(std::size_t bytes, unsigned int flags);
[[nodiscard]] device_memory allocate_device(std::size_t bytes);
[[nodiscard]] managed_memory allocate_managed(std::size_t bytes);
// Throws unsupported naming the CUDA error when the memory cannot be registered.
[[nodiscard]] host_registration register_host(std::span<std::byte> memory, unsigned int flags);

// Device address of host memory that was allocated or registered as mapped.
[[nodiscard]] void* mapped_device_pointer(void* host);

// Throws unsupported when a device address breaks the 256-byte alignment engines require.
void require_device_alignment(const void* device_ptr, const char* what);

}  // namespace ferry::memory
