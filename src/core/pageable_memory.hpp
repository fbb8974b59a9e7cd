// Page-aligned host memory from malloc: what the copy strategies start from.
#pragma once

#include <cstddef>

#include "core/unique_allocation.hpp"

namespace ferry::core {

void free_pageable(void* p) noexcept;
using pageable_memory = unique_allocation<free_pageable>;

// Page-aligned so it can also be registered and so the device sees 256-byte-aligned addresses.
[[nodiscard]] pageable_memory allocate_pageable(std::size_t bytes);

}  // namespace ferry::core
