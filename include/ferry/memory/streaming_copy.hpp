// Writing bytes that a DMA or the GPU will read next, without leaving them dirty in the CPU caches.
//
// A pinned host->device copy right after the CPU wrote its buffer with ordinary stores runs
// slower than one of an untouched buffer: the DMA's reads find dirty lines in the CPU caches and
// wait for them, and the GPU's own zero-copy reads of host memory lose some speed too. Written
// with non-temporal (streaming) stores instead, the copy runs nearly as fast as from an untouched
// buffer (docs/RESULTS.md, "Link efficiency: the CPU's cache, not the link"). Clients that fill
// ferry's host input buffers should use this.
#pragma once

#include <cstddef>
#include <span>

namespace ferry {

// Copies `source` into `destination` (same size; they must not overlap) with non-temporal stores
// on x86-64, then fences, so the bytes are in memory, not the CPU caches, before the caller
// enqueues a copy or kernel that reads them. Elsewhere a plain memcpy (see the .cpp for why).
// Worth it for buffers of a few hundred KiB and more; a few KB are better copied normally.
// Throws invalid_argument when the sizes differ.
void copy_streaming(std::span<std::byte> destination, std::span<const std::byte> source);

}  // namespace ferry
