// The KServe v2 HTTP/REST inference body, with Triton's binary tensor data extension:
//   request:  a JSON inference header, then (when the Inference-Header-Content-Length header is
//             given) the raw bytes of every input whose parameters carry binary_data_size, in
//             input order;
//   response: the same layout for outputs asked for with parameters.binary_data (or, for all
//             outputs, the request parameter binary_data_output), each marked with its
//             binary_data_size in the JSON header.
// Pure functions over bytes, so every error path is unit-tested without a server.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "serve/vocabulary/inference.hpp"

namespace ferry::serve {

struct http_limits {
  // The JSON part of a request (its whole body when no binary data follows). JSON tensor data
  // is ~5x larger than binary, so this is generous, but it bounds the parser's memory.
  std::size_t max_inference_header_bytes = std::size_t{64} << 20;
};

struct http_infer_request {
  infer_request request;  // inputs' data point into the body, or into request.storage
  // For each of request.outputs (or, when it is empty, for every output): return it as binary.
  std::vector<bool> binary_outputs;
  bool binary_by_default = false;  // the binary_data_output request parameter
};

// Checks an input's name, datatype and shape against the model (the tensor has no data yet):
// called before any of the input's JSON data is decoded, so that a wrong tensor costs no more
// than its header. Throws request_error to refuse it.
using input_check = std::function<void(const input_tensor&)>;

// Parses a request body. `header_length` is the Inference-Header-Content-Length header's text,
// when present. The body must outlive the result. JSON tensor data is decoded straight into
// typed bytes (no document of it is built), after `check` has passed the input. Throws
// request_error: bad_request for malformed JSON, a bad or inconsistent header length, a truncated
// binary body, trailing bytes, unsupported datatypes or parameters, inputs with no data or two
// sources of data, JSON data that does not match its shape or type; payload_too_large for a
// JSON header over the limit; and what `check` throws.
[[nodiscard]] http_infer_request parse_http_infer_request(std::string_view body,
                                                          std::optional<std::string_view> header_length,
                                                          const http_limits& limits, const input_check& check = {});

struct http_infer_body {
  std::string body;
  std::optional<std::size_t> header_length;  // set when binary outputs follow the JSON
};

// Encodes a response; `binary[i]` says whether response.outputs[i] goes as binary data.
[[nodiscard]] http_infer_body encode_http_infer_response(const infer_response& response,
                                                         const std::vector<bool>& binary);

// Whether each of the response's outputs goes as binary: `requested` and `binary` are the
// request's output names and their binary_data choices, `by_default` its binary_data_output.
[[nodiscard]] std::vector<bool> binary_choices(const std::vector<std::string>& requested,
                                               const std::vector<bool>& binary, bool by_default,
                                               const infer_response& response);

}  // namespace ferry::serve
