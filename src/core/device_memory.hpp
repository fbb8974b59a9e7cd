// Device memory from cudaMalloc: on the current device, or on the GPU named.
#pragma once

#include <cstddef>

#include "core/unique_allocation.hpp"

namespace ferry::core {

void free_device(void* p) noexcept;
using device_memory = unique_allocation<free_device>;

[[nodiscard]] device_memory allocate_device(std::size_t bytes);
[[nodiscard]] device_memory allocate_device(std::size_t bytes, int ordinal);

}  // namespace ferry::core
