// libFuzzer target: tensor data as JSON numbers (the protocol's "data" field) to typed bytes.
//
// Input: one byte choosing the datatype, one byte giving the element count the shape claims
// (0-255), then the JSON text of "data". Text that is not JSON is not this target's business
// (the HTTP codec target covers the parser's refusals).
//
// Decoding may refuse only with request_error. What it accepts must have the claimed size and
// come back unchanged through the encoder and a second decode.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/json_tensor.hpp"
#include "serve/request_error.hpp"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

constexpr std::array types{ferry::dtype::boolean, ferry::dtype::i8,  ferry::dtype::u8,  ferry::dtype::i32,
                           ferry::dtype::i64,     ferry::dtype::f16, ferry::dtype::bf16, ferry::dtype::f32};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return -1;
  const ferry::dtype type = types[data[0] % types.size()];
  const std::size_t elements = data[1];
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return -1;
  try {
    const std::vector<std::byte> bytes = ferry::serve::decode_json_data(doc, type, elements, "x");
    require(bytes.size() == elements * ferry::size_of(type));
    const nlohmann::json encoded = ferry::serve::encode_json_data(bytes, type);
    require(encoded.is_array() && encoded.size() == elements);
    const std::vector<std::byte> again = ferry::serve::decode_json_data(encoded, type, elements, "x");
    require(again == bytes);
  } catch (const ferry::serve::request_error&) {
    // A refusal naming the tensor: what bad data must get.
  }
  return 0;
}
