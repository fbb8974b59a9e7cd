// Page-locked host memory from cudaHostAlloc (mapped into the device's address space when
// the flags ask for it).
#pragma once

#include <cstddef>

#include "core/unique_allocation.hpp"

namespace ferry::core {

void free_pinned(void* p) noexcept;
using pinned_memory = unique_allocation<free_pinned>;

// `flags` are cudaHostAlloc's (cudaHostAllocDefault, cudaHostAllocMapped, ...).
[[nodiscard]] pinned_memory allocate_pinned(std::size_t bytes, unsigned int flags);

}  // namespace ferry::core
