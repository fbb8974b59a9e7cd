#include "serve/codec/json_tensor.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>

#include "serve/codec/client_json.hpp"
#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve {
namespace {

using json = nlohmann::json;

template <typename T>
T get(std::span<const std::byte> bytes, std::size_t index) {
  T value;
  std::memcpy(&value, bytes.data() + index * sizeof(T), sizeof(T));
  return value;
}

// Halfway between FLT_MAX and the next power of two: values below it round to a finite float,
// so 3.4028235e38 (FLT_MAX as printed) is taken, 3.5e38 is not.
constexpr double float_rounding_limit = 0x1.ffffffp127;

bool is_integer_type(dtype type) {
  return type == dtype::i8 || type == dtype::u8 || type == dtype::i32 || type == dtype::i64;
}

bool is_float_type(dtype type) { return type == dtype::f32 || type == dtype::f16 || type == dtype::bf16; }

// Whether a number the parser read as a double was written as an integer: one too large for 64
// bits, so out of every integer type's range rather than a fraction.
bool written_as_integer(std::string_view token) {
  if (!token.empty() && token.front() == '-') token.remove_prefix(1);
  return !token.empty() && token.find_first_not_of("0123456789") == std::string_view::npos;
}

template <typename Int>
bool fits(std::int64_t v) {
  return v >= static_cast<std::int64_t>(std::numeric_limits<Int>::min()) &&
         (v < 0 || static_cast<std::uint64_t>(v) <= static_cast<std::uint64_t>(std::numeric_limits<Int>::max()));
}

}  // namespace

json_tensor_decoder::json_tensor_decoder(dtype type, std::size_t elements, std::size_t most_elements,
                                         std::string tensor)
    : type_(type), elements_(elements), tensor_(std::move(tensor)) {
  bytes_.reserve(std::min(elements, most_elements) * size_of(type));
}

std::string json_tensor_decoder::out_of_range() const { return "is out of range for " + std::string(to_string(type_)); }

void json_tensor_decoder::refuse(const std::string& quoted, const std::string& why) const {
  throw bad_request("input '" + tensor_ + "': element " + std::to_string(count_) + " (" + quoted + ") " + why);
}

template <typename T>
void json_tensor_decoder::append(const T& value) {
  if (count_ == elements_)
    throw bad_request("input '" + tensor_ + "': its shape has " + std::to_string(elements_) +
                      " elements but \"data\" holds more");
  const auto* bytes = reinterpret_cast<const std::byte*>(&value);
  bytes_.insert(bytes_.end(), bytes, bytes + sizeof(T));
  ++count_;
}

void json_tensor_decoder::integer(std::int64_t value) {
  const auto range = [&] { refuse(std::to_string(value), out_of_range()); };
  switch (type_) {
    case dtype::i8:
      fits<std::int8_t>(value) ? append(static_cast<std::int8_t>(value)) : range();
      break;
    case dtype::u8:
      fits<std::uint8_t>(value) ? append(static_cast<std::uint8_t>(value)) : range();
      break;
    case dtype::i32:
      fits<std::int32_t>(value) ? append(static_cast<std::int32_t>(value)) : range();
      break;
    case dtype::i64:
      append(value);
      break;
    case dtype::boolean:
      refuse(std::to_string(value), "is not true or false");
    case dtype::f32:
    case dtype::f16:
    case dtype::bf16:
      floating(static_cast<double>(value), std::to_string(value));
      break;
  }
}

void json_tensor_decoder::unsigned_integer(std::uint64_t value) {
  if (value <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    integer(static_cast<std::int64_t>(value));
  } else if (is_float_type(type_)) {
    floating(static_cast<double>(value), std::to_string(value));
  } else {
    refuse(std::to_string(value), type_ == dtype::boolean ? "is not true or false" : out_of_range());
  }
}

void json_tensor_decoder::floating(double value, std::string_view token) {
  const std::string quoted = quote_text(token);
  if (type_ == dtype::boolean) refuse(quoted, "is not true or false");
  if (is_integer_type(type_)) refuse(quoted, written_as_integer(token) ? out_of_range() : "is not an integer");
  const auto range = [&] { refuse(quoted, out_of_range()); };
  // Checked before narrowing: a double beyond a float's range has no float value (undefined).
  if (!std::isfinite(value) || std::fabs(value) >= float_rounding_limit) range();
  const auto f = static_cast<float>(value);
  if (type_ == dtype::f32) {
    append(f);
  } else if (type_ == dtype::f16) {
    const __half h = __float2half_rn(f);
    if (std::isinf(__half2float(h))) range();
    append(h);
  } else {
    const __nv_bfloat16 b = __float2bfloat16_rn(f);
    if (std::isinf(__bfloat162float(b))) range();
    append(b);
  }
}

void json_tensor_decoder::boolean(bool value) {
  if (type_ != dtype::boolean) refuse(value ? "true" : "false", "is not a number");
  append(static_cast<std::uint8_t>(value ? 1 : 0));
}

void json_tensor_decoder::other(const std::string& quoted) {
  refuse(quoted, type_ == dtype::boolean ? "is not true or false" : "is not a number");
}

void json_tensor_decoder::finish() {
  if (count_ != elements_)
    throw bad_request("input '" + tensor_ + "': its shape has " + std::to_string(elements_) +
                      " elements but \"data\" holds " + std::to_string(count_));
}

json encode_json_data(std::span<const std::byte> bytes, dtype type) {
  json out = json::array();
  const std::size_t n = bytes.size() / size_of(type);
  auto& array = out.get_ref<json::array_t&>();
  array.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (type) {
      case dtype::boolean:
        array.emplace_back(get<std::uint8_t>(bytes, i) != 0);
        break;
      case dtype::i8:
        array.emplace_back(get<std::int8_t>(bytes, i));
        break;
      case dtype::u8:
        array.emplace_back(get<std::uint8_t>(bytes, i));
        break;
      case dtype::i32:
        array.emplace_back(get<std::int32_t>(bytes, i));
        break;
      case dtype::i64:
        array.emplace_back(get<std::int64_t>(bytes, i));
        break;
      case dtype::f32:
        array.emplace_back(get<float>(bytes, i));
        break;
      case dtype::f16:
        array.emplace_back(__half2float(get<__half>(bytes, i)));
        break;
      case dtype::bf16:
        array.emplace_back(__bfloat162float(get<__nv_bfloat16>(bytes, i)));
        break;
    }
  }
  return out;
}

}  // namespace ferry::serve
