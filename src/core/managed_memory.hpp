// Unified memory from cudaMallocManaged, attached globally.
#pragma once

#include <cstddef>

#include "core/unique_allocation.hpp"

namespace ferry::core {

void free_managed(void* p) noexcept;
using managed_memory = unique_allocation<free_managed>;

[[nodiscard]] managed_memory allocate_managed(std::size_t bytes);

}  // namespace ferry::core
