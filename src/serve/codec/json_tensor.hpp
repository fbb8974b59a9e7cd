// Tensor data as JSON numbers (the protocol's "data" field) <-> typed bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferry/engines/engine.hpp"

namespace ferry::serve {

// Decodes one input's "data" (a flat or nested array, row-major) element by element, as a SAX
// parser meets them, straight into the tensor's typed bytes: no document of the array is built,
// and nothing is allocated beyond the tensor itself.
class json_tensor_decoder {
 public:
  // For `elements` values of `type`; `tensor` names the input in messages. A client's shape sizes
  // no allocation on its word alone: room is reserved for `most_elements` at most (what the
  // request's JSON text could hold at all), and grows only as elements arrive.
  json_tensor_decoder(dtype type, std::size_t elements, std::size_t most_elements, std::string tensor);

  // The next element. Each throws request_error(bad_request) naming the tensor and the element
  // for one element more than the shape holds, a value of the wrong kind (a fraction for an
  // integer type, a number for BOOL) or one out of the type's range (for FP32, FP16 and BF16:
  // one that rounds beyond the largest finite value, never to infinity).
  void integer(std::int64_t value);
  void unsigned_integer(std::uint64_t value);
  // `token`: the number as the client wrote it, for messages.
  void floating(double value, std::string_view token);
  void boolean(bool value);
  // An element that is no number nor boolean (null, a string, an object), as messages quote it:
  // always throws.
  [[noreturn]] void other(const std::string& quoted);

  // Throws request_error(bad_request) unless exactly the shape's elements arrived.
  void finish();
  // The decoded bytes, once finished.
  [[nodiscard]] std::vector<std::byte> release() { return std::move(bytes_); }

 private:
  // Appends the next element; throws past the shape's count.
  template <typename T>
  void append(const T& value);
  [[noreturn]] void refuse(const std::string& quoted, const std::string& why) const;
  [[nodiscard]] std::string out_of_range() const;  // "is out of range for FP16"

  dtype type_;
  std::size_t elements_;
  std::string tensor_;
  std::vector<std::byte> bytes_;
  std::size_t count_ = 0;  // elements received
};

// A flat JSON array of the values in `bytes` (FP16/BF16 as floats, BOOL as true/false).
[[nodiscard]] nlohmann::json encode_json_data(std::span<const std::byte> bytes, dtype type);

}  // namespace ferry::serve
