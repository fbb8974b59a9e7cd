// Which GPU already holds a request's input: the question behind data-following placement
// (replica_set::acquire_on). A tensor in device memory (a client's CUDA shared memory opened with
// cudaIpcOpenMemHandle, or a buffer an earlier stage wrote) lives on its device; managed memory
// lives where it was last prefetched, or where it prefers to be; host memory is on no GPU.
#pragma once

#include <cstddef>
#include <optional>

namespace ferry {

// What the driver says about one address range, reduced to what placement needs.
struct pointer_facts {
  enum class kind { host, device, managed };
  kind memory = kind::host;
  int device = -1;              // device memory: the GPU it is on
  int last_prefetch = -2;       // managed: GPU id, -1 (the CPU) or -2 (none, or mixed)
  int preferred_location = -2;  // managed: GPU id, -1 (the CPU) or -2 (none, or mixed)
};

// The GPU holding the data, or nullopt when no single GPU does (host memory; managed pages last
// sent to the CPU, never prefetched anywhere, or split between places). An explicit prefetch
// beats a preference: it says where the pages were sent, a preference only where they go on
// eviction. Pure.
[[nodiscard]] std::optional<int> gpu_holding(const pointer_facts& facts) noexcept;

// Asks the driver (cudaPointerGetAttributes, cudaMemRangeGetAttribute) about [data, data+bytes).
// Memory CUDA does not know (plain malloc) is host memory. Throws cuda_error for a failed query.
[[nodiscard]] pointer_facts query_pointer(const void* data, std::size_t bytes);

// gpu_holding(query_pointer(data, bytes)).
[[nodiscard]] std::optional<int> gpu_holding(const void* data, std::size_t bytes);

}  // namespace ferry
