#include "serve/admission/answer_size.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "ferry/engines/engine.hpp"

namespace ferry::serve {
namespace {

// The answer's JSON beyond its tensors' data: names, datatypes, shapes, parameters.
constexpr std::size_t header_bytes_per_output = 512;
constexpr std::size_t header_bytes = 1024;

// Elements of output `spec` at `rows` rows; dynamic dims other than the batch count as 1.
std::size_t elements(const tensor_spec& spec, std::int64_t rows, bool batched) {
  std::size_t n = 1;
  for (std::size_t d = 0; d < spec.shape.size(); ++d) {
    const std::int64_t dim = batched && d == 0 ? rows : spec.shape[d];
    n *= static_cast<std::size_t>(std::max<std::int64_t>(dim, 1));
  }
  return n;
}

}  // namespace

std::size_t json_chars_per_element(dtype type) noexcept {
  switch (type) {
    case dtype::boolean:
      return 6;  // "false,"
    case dtype::i8:
      return 5;  // "-128,"
    case dtype::u8:
      return 4;  // "255,"
    case dtype::i32:
      return 12;  // "-2147483648,"
    case dtype::i64:
      return 21;  // "-9223372036854775808,"
    case dtype::f32:
    case dtype::f16:
    case dtype::bf16:
      return 24;  // shortest text of the double the value becomes, "-1.1754943508222875e-38,"
  }
  return 24;
}

std::size_t answer_bytes_bound(const model_signature& signature, const infer_request& request, answer_protocol protocol,
                               std::size_t request_bytes, const std::function<bool(const std::string&)>& binary) {
  const bool batched = signature.max_batch > 0;
  std::int64_t rows = 1;
  if (batched && !request.inputs.empty() && !request.inputs.front().shape.empty())
    rows = std::clamp<std::int64_t>(request.inputs.front().shape.front(), 1, signature.max_batch);
  std::size_t raw = 0;                  // the outputs, while the model runs and the answer is encoded
  std::size_t encoding = header_bytes;  // the encoded answer beside them
  for (const tensor_spec& spec : signature.outputs) {
    const auto asked = std::find_if(request.outputs.begin(), request.outputs.end(),
                                    [&](const requested_output& o) { return o.name == spec.name; });
    if (!request.outputs.empty() && asked == request.outputs.end()) continue;  // not asked for
    encoding += header_bytes_per_output;
    if (asked != request.outputs.end() && asked->shared_memory) continue;
    const std::size_t n = elements(spec, rows, batched);
    const std::size_t bytes = n * size_of(spec.type);
    raw += bytes;
    if (protocol == answer_protocol::grpc || (binary && binary(spec.name)))
      encoding += bytes;  // the response message (gRPC) or the body (HTTP binary): one copy
    else
      encoding += n * (sizeof(nlohmann::json) + json_chars_per_element(spec.type));
  }
  return raw + (encoding > request_bytes ? encoding - request_bytes : 0);
}

}  // namespace ferry::serve
