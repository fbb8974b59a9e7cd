// libFuzzer target: the KServe v2 HTTP inference body, JSON and binary tensor data extension.
//
// Input: the request body as is (no Inference-Header-Content-Length header), or
// "#<header value>\n<body>" for a request that carries that header with the given text (how the
// binary extension's requests are written in corpus/http_infer_codec/).
//
// The parser may refuse a body only with request_error; anything else escaping it (another
// exception, a crash, a sanitizer report) is a finding. An accepted request is then answered with
// its own inputs as outputs, through the response encoder, whose framing is checked.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/codec/http_infer_codec.hpp"
#include "serve/vocabulary/request_error.hpp"

#include "fuzz_check.hpp"

namespace {

using namespace ferry::serve;

void check_accepted(const http_infer_request& parsed, std::string_view body) {
  const infer_request& request = parsed.request;
  FUZZ_REQUIRE(!request.inputs.empty());
  FUZZ_REQUIRE(parsed.binary_outputs.size() == request.outputs.size());
  infer_response response{"model", "1", request.id, {}};
  std::vector<std::string> requested;
  for (const auto& out : request.outputs) requested.push_back(out.name);
  for (const input_tensor& in : request.inputs) {
    if (in.shared_memory) {
      FUZZ_REQUIRE(in.data.empty());  // looked up in the registry later, not here
      continue;
    }
    // Binary inputs point into the body; JSON ones are decoded to the size their shape says.
    const auto first = reinterpret_cast<std::uintptr_t>(in.data.data());
    const auto start = reinterpret_cast<std::uintptr_t>(body.data());
    const bool in_body = first >= start && first + in.data.size() <= start + body.size();
    FUZZ_REQUIRE(in_body || in.data.size() == element_count(in.shape) * ferry::size_of(in.type));
    response.outputs.push_back({in.name, in.type, in.shape, {in.data.begin(), in.data.end()}, std::nullopt});
  }
  const auto binary = binary_choices(requested, parsed.binary_outputs, parsed.binary_by_default, response);
  FUZZ_REQUIRE(binary.size() == response.outputs.size());
  const http_infer_body encoded = encode_http_infer_response(response, binary);
  std::size_t binary_bytes = 0;
  for (std::size_t i = 0; i < binary.size(); ++i)
    if (binary[i]) binary_bytes += response.outputs[i].data.size();
  const std::size_t json_bytes = encoded.header_length.value_or(encoded.body.size());
  FUZZ_REQUIRE(json_bytes + binary_bytes == encoded.body.size());
  FUZZ_REQUIRE(nlohmann::json::accept(std::string_view(encoded.body).substr(0, json_bytes)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  std::optional<std::string_view> header_length;
  if (body.starts_with('#')) {
    const auto newline = body.find('\n');
    if (newline == std::string_view::npos) return -1;  // not an input of this target's format
    header_length = body.substr(1, newline - 1);
    body.remove_prefix(newline + 1);
  }
  // The body ends where libFuzzer's buffer of exactly this input ends, so ASan sees any read
  // past it.
  try {
    check_accepted(parse_http_infer_request(body, header_length, http_limits{}), body);
  } catch (const request_error&) {
    // A refusal with a status and a message: what a bad body must get.
  }
  return 0;
}
