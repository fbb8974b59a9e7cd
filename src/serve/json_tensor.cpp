#include "serve/json_tensor.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "serve/client_json.hpp"
#include "serve/request_error.hpp"

namespace ferry::serve {
namespace {

using json = nlohmann::json;

void flatten(const json& value, std::vector<const json*>& out) {
  if (value.is_array()) {
    for (const auto& v : value) flatten(v, out);
  } else {
    out.push_back(&value);
  }
}

template <typename T>
void put(std::vector<std::byte>& bytes, std::size_t index, T value) {
  std::memcpy(bytes.data() + index * sizeof(T), &value, sizeof(T));
}

template <typename T>
T get(std::span<const std::byte> bytes, std::size_t index) {
  T value;
  std::memcpy(&value, bytes.data() + index * sizeof(T), sizeof(T));
  return value;
}

template <typename Float>
const char* out_of_range_text() {
  if constexpr (std::is_same_v<Float, float>) return "is out of range for FP32";
  else if constexpr (std::is_same_v<Float, __half>) return "is out of range for FP16";
  else return "is out of range for BF16";
}

template <typename Int>
Int to_integer(const json& v, const std::string& tensor, std::size_t index) {
  const auto bad = [&](const char* why) {
    return bad_request("input '" + tensor + "': element " + std::to_string(index) + " (" + quote_json(v) +
                       ") " + why);
  };
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<Int>::max())) throw bad("is out of range");
    return static_cast<Int>(u);
  }
  if (v.is_number_integer()) {
    const auto s = v.get<std::int64_t>();
    if (s < static_cast<std::int64_t>(std::numeric_limits<Int>::min()) ||
        (s > 0 && static_cast<std::uint64_t>(s) > static_cast<std::uint64_t>(std::numeric_limits<Int>::max())))
      throw bad("is out of range");
    return static_cast<Int>(s);
  }
  throw bad("is not an integer");
}

// Halfway between FLT_MAX and the next power of two: values below it round to a finite float,
// so 3.4028235e38 (FLT_MAX as printed) is taken, 3.5e38 is not.
constexpr double float_rounding_limit = 0x1.ffffffp127;

// The value as `Float` (float, __half, __nv_bfloat16), rounded to nearest; a value that rounds
// beyond the type's largest finite value is refused rather than stored as infinity.
template <typename Float>
Float to_float(const json& v, const std::string& tensor, std::size_t index) {
  const auto bad = [&](const char* why) {
    return bad_request("input '" + tensor + "': element " + std::to_string(index) + " (" + quote_json(v) + ") " + why);
  };
  if (!v.is_number()) throw bad("is not a number");
  const double d = v.get<double>();
  if (std::fabs(d) >= float_rounding_limit) throw bad(out_of_range_text<Float>());
  const auto f = static_cast<float>(d);
  if constexpr (std::is_same_v<Float, float>) {
    return f;
  } else if constexpr (std::is_same_v<Float, __half>) {
    const __half h = __float2half_rn(f);
    if (std::isinf(__half2float(h))) throw bad(out_of_range_text<Float>());
    return h;
  } else {
    const __nv_bfloat16 b = __float2bfloat16_rn(f);
    if (std::isinf(__bfloat162float(b))) throw bad(out_of_range_text<Float>());
    return b;
  }
}

}  // namespace

std::vector<std::byte> decode_json_data(const json& data, dtype type, std::size_t elements,
                                        const std::string& tensor) {
  std::vector<const json*> flat;
  flat.reserve(elements);
  flatten(data, flat);
  if (flat.size() != elements)
    throw bad_request("input '" + tensor + "': its shape has " + std::to_string(elements) +
                      " elements but \"data\" holds " + std::to_string(flat.size()));
  std::vector<std::byte> bytes(elements * size_of(type));
  for (std::size_t i = 0; i < elements; ++i) {
    const json& v = *flat[i];
    switch (type) {
      case dtype::boolean:
        if (!v.is_boolean())
          throw bad_request("input '" + tensor + "': element " + std::to_string(i) + " (" + quote_json(v) +
                            ") is not true or false");
        put<std::uint8_t>(bytes, i, v.get<bool>() ? 1 : 0);
        break;
      case dtype::i8: put(bytes, i, to_integer<std::int8_t>(v, tensor, i)); break;
      case dtype::u8: put(bytes, i, to_integer<std::uint8_t>(v, tensor, i)); break;
      case dtype::i32: put(bytes, i, to_integer<std::int32_t>(v, tensor, i)); break;
      case dtype::i64: put(bytes, i, to_integer<std::int64_t>(v, tensor, i)); break;
      case dtype::f32: put(bytes, i, to_float<float>(v, tensor, i)); break;
      case dtype::f16: put(bytes, i, to_float<__half>(v, tensor, i)); break;
      case dtype::bf16: put(bytes, i, to_float<__nv_bfloat16>(v, tensor, i)); break;
    }
  }
  return bytes;
}

json encode_json_data(std::span<const std::byte> bytes, dtype type) {
  json out = json::array();
  const std::size_t n = bytes.size() / size_of(type);
  auto& array = out.get_ref<json::array_t&>();
  array.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (type) {
      case dtype::boolean: array.emplace_back(get<std::uint8_t>(bytes, i) != 0); break;
      case dtype::i8: array.emplace_back(get<std::int8_t>(bytes, i)); break;
      case dtype::u8: array.emplace_back(get<std::uint8_t>(bytes, i)); break;
      case dtype::i32: array.emplace_back(get<std::int32_t>(bytes, i)); break;
      case dtype::i64: array.emplace_back(get<std::int64_t>(bytes, i)); break;
      case dtype::f32: array.emplace_back(get<float>(bytes, i)); break;
      case dtype::f16: array.emplace_back(__half2float(get<__half>(bytes, i))); break;
      case dtype::bf16: array.emplace_back(__bfloat162float(get<__nv_bfloat16>(bytes, i))); break;
    }
  }
  return out;
}

}  // namespace ferry::serve
