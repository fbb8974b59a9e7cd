#include "memory/allocations.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

#include "ferry/buffer.hpp"
#include "ferry/error.hpp"

namespace ferry::memory {

scoped_device::scoped_device(int ordinal) {
  FERRY_CUDA_TRY(cudaGetDevice(&previous_));
  if (previous_ != ordinal) FERRY_CUDA_TRY(cudaSetDevice(ordinal));
}

scoped_device::~scoped_device() { FERRY_CUDA_TRY_NOTHROW(cudaSetDevice(previous_)); }

void free_pageable(void* p) noexcept { std::free(p); }  // NOLINT: pairs with aligned_alloc
void free_pinned(void* p) noexcept { FERRY_CUDA_TRY_NOTHROW(cudaFreeHost(p)); }
void free_device(void* p) noexcept { FERRY_CUDA_TRY_NOTHROW(cudaFree(p)); }
void free_managed(void* p) noexcept { FERRY_CUDA_TRY_NOTHROW(cudaFree(p)); }
void unregister_host(void* p) noexcept { FERRY_CUDA_TRY_NOTHROW(cudaHostUnregister(p)); }

namespace {
std::size_t page_size() {
  static const auto size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}
std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }
}  // namespace

pageable_memory allocate_pageable(std::size_t bytes) {
  const std::size_t page = page_size();
  void* p = std::aligned_alloc(page, round_up(bytes, page));  // NOLINT: freed by free_pageable
  if (p == nullptr) throw std::bad_alloc();
  return {p, bytes};
}

pinned_memory allocate_pinned(std::size_t bytes, unsigned int flags) {
  void* p = nullptr;
  FERRY_CUDA_TRY(cudaHostAlloc(&p, bytes, flags));
  return {p, bytes};
}

device_memory allocate_device(std::size_t bytes) {
  void* p = nullptr;
  FERRY_CUDA_TRY(cudaMalloc(&p, bytes));
  return {p, bytes};
}

managed_memory allocate_managed(std::size_t bytes) {
  void* p = nullptr;
  FERRY_CUDA_TRY(cudaMallocManaged(&p, bytes, cudaMemAttachGlobal));
  return {p, bytes};
}

host_registration register_host(std::span<std::byte> memory, unsigned int flags) {
  const cudaError_t status = cudaHostRegister(memory.data(), memory.size(), flags);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    throw unsupported("cannot register " + std::to_string(memory.size()) +
                      " bytes of caller memory with cudaHostRegister: " +
                      cudaGetErrorName(status) + " (" + cudaGetErrorString(status) +
                      "); the memory must be writable, not already registered, and not device "
                      "or managed memory");
  }
  return {memory.data(), memory.size()};
}

void* mapped_device_pointer(void* host) {
  void* device = nullptr;
  FERRY_CUDA_TRY(cudaHostGetDevicePointer(&device, host, 0));
  return device;
}

void require_device_alignment(const void* device_ptr, const char* what) {
  const auto address = reinterpret_cast<std::uintptr_t>(device_ptr);
  if (address % device_alignment != 0) {
    throw unsupported(std::string(what) + ": device address is not " +
                      std::to_string(device_alignment) +
                      "-byte aligned (engines such as TensorRT require it); pass memory that "
                      "starts on a " + std::to_string(device_alignment) + "-byte boundary");
  }
}

}  // namespace ferry::memory
