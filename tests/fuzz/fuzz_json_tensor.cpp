// libFuzzer target: tensor data as JSON numbers (the protocol's "data" field), both ways.
//
// Input: one byte choosing the datatype, one byte giving the element count the shape claims
// (0-255), then the text of "data" (one JSON value). It is decoded as the server decodes it, inside an inference
// body: {"inputs": [{"name": "x", "shape": [N], "datatype": T, "data": <text>}]}.
//
// Decoding may refuse only with request_error. What it accepts must have the claimed size, and
// what the server would answer with it (encode_json_data, as a response's "data") must decode to
// the same bytes: the server returns exactly the values it read.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/codec/http_infer_codec.hpp"
#include "serve/codec/json_tensor.hpp"
#include "serve/vocabulary/request_error.hpp"

#include "fuzz_check.hpp"

namespace {

using namespace ferry::serve;

constexpr std::array<std::pair<ferry::dtype, const char*>, 8> types{{{ferry::dtype::boolean, "BOOL"},
                                                                     {ferry::dtype::i8, "INT8"},
                                                                     {ferry::dtype::u8, "UINT8"},
                                                                     {ferry::dtype::i32, "INT32"},
                                                                     {ferry::dtype::i64, "INT64"},
                                                                     {ferry::dtype::f16, "FP16"},
                                                                     {ferry::dtype::bf16, "BF16"},
                                                                     {ferry::dtype::f32, "FP32"}}};

std::string body_with(const char* datatype, std::size_t elements, std::string_view data) {
  return R"({"inputs": [{"name": "x", "shape": [)" + std::to_string(elements) + R"(], "datatype": ")" + datatype +
         R"(", "data": )" + std::string(data) + "}]}";
}

// The bytes of input "x" of `body`, or nothing when the body is refused.
std::optional<std::vector<std::byte>> decode(const std::string& body, ferry::dtype type) {
  try {
    const http_infer_request parsed = parse_http_infer_request(body, std::nullopt, http_limits{});
    FUZZ_REQUIRE(parsed.request.inputs.size() == 1 && parsed.request.inputs[0].type == type);
    const std::span<const std::byte> data = parsed.request.inputs[0].data;
    return std::vector<std::byte>(data.begin(), data.end());
  } catch (const request_error&) {
    return std::nullopt;  // a refusal with a status and a message: what bad data must get
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return -1;
  const auto [type, datatype] = types[data[0] % types.size()];
  const std::size_t elements = data[1];
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  // One JSON value, or the text could close the input and change the body around it.
  if (!nlohmann::json::accept(text)) return -1;
  const auto bytes = decode(body_with(datatype, elements, text), type);
  if (!bytes) return 0;
  FUZZ_REQUIRE(bytes->size() == elements * ferry::size_of(type));
  const std::string answered = encode_json_data(*bytes, type).dump();
  const auto again = decode(body_with(datatype, elements, answered), type);
  FUZZ_REQUIRE(again.has_value() && *again == *bytes);
  return 0;
}
