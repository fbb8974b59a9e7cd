// libFuzzer target: a serialized ModelInferRequest (what a gRPC client sends) to the server's
// inference request.
//
// Input: the message's protobuf bytes; bytes that are not a ModelInferRequest are skipped, since
// gRPC refuses them before the server sees them.
//
// Conversion may refuse only with request_error. An accepted request is answered with its own
// inputs as outputs through the response encoder, whose raw contents must match them.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include <google/protobuf/stubs/logging.h>

#include "kserve_v2.pb.h"
#include "serve/codec/grpc_infer_codec.hpp"
#include "serve/vocabulary/request_error.hpp"

#include "fuzz_check.hpp"

namespace {

using namespace ferry::serve;

void check_accepted(const infer_request& request, const inference::ModelInferRequest& message) {
  FUZZ_REQUIRE(static_cast<int>(request.inputs.size()) == message.inputs_size());
  FUZZ_REQUIRE(static_cast<int>(request.outputs.size()) == message.outputs_size());
  infer_response response{request.model, request.version, request.id, {}};
  for (const input_tensor& in : request.inputs) {
    if (in.shared_memory) {
      FUZZ_REQUIRE(in.data.empty());  // looked up in the registry later, not here
      continue;
    }
    response.outputs.push_back({in.name, in.type, in.shape, {in.data.begin(), in.data.end()}, std::nullopt});
  }
  inference::ModelInferResponse answer;
  to_grpc(response, answer);
  FUZZ_REQUIRE(answer.outputs_size() == static_cast<int>(response.outputs.size()));
  FUZZ_REQUIRE(answer.raw_output_contents_size() == answer.outputs_size());
  for (int i = 0; i < answer.outputs_size(); ++i) {
    const auto& sent = response.outputs[static_cast<std::size_t>(i)].data;
    const std::string& raw = answer.raw_output_contents(i);
    FUZZ_REQUIRE(raw.size() == sent.size() && (sent.empty() || std::memcmp(raw.data(), sent.data(), sent.size()) == 0));
  }
}

}  // namespace

// protobuf logs every string field that is not UTF-8 (the message is then refused): quiet it, or
// the log is most of what the fuzzer writes.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  inference::ModelInferRequest message;
  if (!message.ParseFromArray(data, static_cast<int>(size))) return -1;
  try {
    check_accepted(from_grpc(message), message);
  } catch (const request_error&) {
    // A refusal with a status and a message: what a bad request must get.
  }
  return 0;
}
