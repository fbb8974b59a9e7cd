// What the built-in strategies need of the platform, each as the reason a device lacking it gives
// (nullopt: it has it). Strategies combine them in their unavailable_reason; the texts name the
// capability as CUDA does, so a user can look it up.
#pragma once

#include <optional>
#include <string>

#include "ferry/device/device_caps.hpp"

namespace ferry::memory {

// cudaHostAlloc(Mapped) and cudaHostRegister(Mapped): the device maps host memory.
[[nodiscard]] std::optional<std::string> needs_host_mapping(const device_caps& caps);
// cudaHostRegister: the caller's memory can be page-locked.
[[nodiscard]] std::optional<std::string> needs_host_register(const device_caps& caps);
// cudaMallocManaged with pipelined slots: the CPU writes slot k+1 while slot k's kernel runs.
[[nodiscard]] std::optional<std::string> needs_concurrent_managed_memory(const device_caps& caps);
// Plain malloc'd memory read by the device (HMM or ATS).
[[nodiscard]] std::optional<std::string> needs_pageable_memory_access(const device_caps& caps);

}  // namespace ferry::memory
