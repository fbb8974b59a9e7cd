// Tensor data as JSON numbers (the protocol's "data" field) <-> typed bytes.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferry/engine.hpp"

namespace ferry::serve {

// Decodes "data" (a flat or nested array, row-major) into `elements` values of type `type`.
// Throws request_error(bad_request) naming `tensor` for a wrong element count or an element of
// the wrong kind (a string, a fraction for an integer type) or a value out of the type's range
// (for FP32, FP16 and BF16: one that rounds beyond the largest finite value, never to infinity).
[[nodiscard]] std::vector<std::byte> decode_json_data(const nlohmann::json& data, dtype type,
                                                      std::size_t elements,
                                                      const std::string& tensor);

// A flat JSON array of the values in `bytes` (FP16/BF16 as floats, BOOL as true/false).
[[nodiscard]] nlohmann::json encode_json_data(std::span<const std::byte> bytes, dtype type);

}  // namespace ferry::serve
