// KServe v2 datatype names ("FP32", "INT64", ...) for ferry's dtypes. ferry::to_string(dtype)
// already prints the protocol's names; this is the other direction.
#pragma once

#include <optional>
#include <string_view>

#include "ferry/engines/engine.hpp"

namespace ferry::serve {

// The dtype of a protocol datatype name, or nullopt for one no ferry engine takes (BYTES,
// UINT16, FP64, ...).
[[nodiscard]] std::optional<dtype> parse_datatype(std::string_view name) noexcept;

}  // namespace ferry::serve
