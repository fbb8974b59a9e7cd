// ModelInferRequest / ModelInferResponse (proto/kserve_v2.proto) <-> the server's protocol-neutral
// inference types. Pure conversions, unit-tested without a server.
#pragma once

#include <cstddef>
#include <span>

#include "kserve_v2.pb.h"
#include "serve/vocabulary/inference.hpp"

namespace ferry::serve {

// Converts a request. Inputs' data point into `message` (raw_input_contents), which must outlive
// the result, or into result.storage (typed contents). Throws request_error(bad_request) naming
// the problem: an unsupported datatype or parameter, a raw_input_contents count that does not
// match the inputs, contents of the wrong kind or count, two sources of data for one input.
[[nodiscard]] infer_request from_grpc(const inference::ModelInferRequest& message);
// The same with the raw_input_contents read apart from the message (grpc_infer_reader.hpp): inputs'
// data point into `raw_inputs`' bytes, which must outlive the result; message.raw_input_contents
// is not read.
[[nodiscard]] infer_request from_grpc(const inference::ModelInferRequest& message,
                                      std::span<const std::span<const std::byte>> raw_inputs);

// Fills `message` with a response: one raw_output_contents entry per output (empty for an output
// written to shared memory, whose parameters then say where).
void to_grpc(const infer_response& response, inference::ModelInferResponse& message);

// The same without raw_output_contents: what precedes the tensors' bytes, which the server sends
// from the outputs' own buffers (grpc_answer_bytes.hpp).
void to_grpc_head(const infer_response& response, inference::ModelInferResponse& message);

}  // namespace ferry::serve
