// The flags every strategy pins, maps or registers host memory with.
//
// Host memory is pinned or registered "portable": page-locked for every GPU of the process, not
// only the one current at allocation. A replica set allocates each session's buffers with that
// session's GPU current, but host memory outlives that choice (a registered client buffer, a
// shared region) and another GPU may copy from it or map it; without the flag it would be
// pageable memory as far as the other GPUs are concerned (slow copies, failed mappings).
#pragma once

#include <cuda_runtime_api.h>

namespace ferry::memory {

inline constexpr unsigned int pinned_flags = cudaHostAllocPortable;
inline constexpr unsigned int mapped_flags = cudaHostAllocMapped | cudaHostAllocPortable;
inline constexpr unsigned int register_flags = cudaHostRegisterPortable;
inline constexpr unsigned int register_mapped_flags = cudaHostRegisterMapped | cudaHostRegisterPortable;

}  // namespace ferry::memory
