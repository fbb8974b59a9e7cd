// Caller memory page-locked with cudaHostRegister for as long as the owner lives.
#pragma once

#include <cstddef>
#include <span>

#include "core/unique_allocation.hpp"

namespace ferry::core {

void unregister_host(void* p) noexcept;
using host_registration = unique_allocation<unregister_host>;

// `flags` are cudaHostRegister's. Throws unsupported naming the CUDA error when the memory
// cannot be registered.
[[nodiscard]] host_registration register_host(std::span<std::byte> memory, unsigned int flags);

}  // namespace ferry::core
