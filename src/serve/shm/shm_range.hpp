// The one range check every shared-memory tensor passes, system or CUDA region alike: the
// client's [offset, offset + byte_size) must lie inside the registered region. Pure arithmetic
// on the region's base and size (never a read), so it is the same for host and device memory and
// is tested without either.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "serve/vocabulary/inference.hpp"

namespace ferry::serve {

// The sub-range `ref` names in `region` (the region's whole registered memory). Throws
// request_error(bad_request) naming `tensor`, the range and the region's size when it does not
// fit, overflowing offsets included.
[[nodiscard]] std::span<std::byte> checked_range(const shm_ref& ref, std::span<std::byte> region,
                                                 const std::string& tensor);

}  // namespace ferry::serve
