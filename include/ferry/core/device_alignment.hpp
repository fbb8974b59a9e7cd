// The alignment of every device address an engine binds: strategies allocate to it, engines check
// it. Here, below both, so neither needs the other for it.
#pragma once

#include <cstddef>

namespace ferry {

inline constexpr std::size_t device_alignment = 256;  // TensorRT's requirement for bindings

}  // namespace ferry
