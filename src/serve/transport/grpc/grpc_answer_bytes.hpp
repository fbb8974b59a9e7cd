// A ModelInferResponse as the bytes gRPC writes, with each output's tensor in its own buffer: the
// answer's small fields are serialized (grpc_infer_codec.hpp), and each raw_output_contents entry
// is its field header followed by a slice that owns the output's bytes, moved out of the
// response. Serialized the usual way, an output of N bytes is held three times while the answer is
// made (the response's tensor, the protobuf message's copy, gRPC's serialized copy); this way once.
//
// The bytes are the message protobuf would write: its fields in field order (raw_output_contents,
// field 6, is the last), so any client parses them as it parses any answer.
#pragma once

#include <grpcpp/support/byte_buffer.h>

#include "serve/vocabulary/inference.hpp"

namespace ferry::serve {

// The answer's bytes; `response`'s output data is moved into them.
[[nodiscard]] grpc::ByteBuffer infer_answer_bytes(infer_response&& response);

}  // namespace ferry::serve
