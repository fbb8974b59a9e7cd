// The element types of tensors, their sizes and their KServe names.
#pragma once

#include <cstddef>
#include <string_view>

namespace ferry {

enum class dtype { f32, f16, bf16, i8, u8, i32, i64, boolean };

[[nodiscard]] std::size_t size_of(dtype t) noexcept;
// The KServe v2 / Triton datatype name ("FP32", "UINT8", ...).
[[nodiscard]] std::string_view to_string(dtype t) noexcept;

}  // namespace ferry
