// The KServe v2 gRPC front end (inference.GRPCInferenceService from proto/kserve_v2.proto, on
// Debian's gRPC): health, metadata, ModelInfer with raw_input_contents / raw_output_contents,
// statistics, the repository index and the shared-memory RPCs. Errors carry the status code the
// protocol's HTTP status maps to and the same message as over HTTP; bytes that do not parse as
// the method's message are INVALID_ARGUMENT, an unknown method UNIMPLEMENTED.
//
// Served on gRPC's callback API as one generic service (each method's bytes parsed here, so a
// malformed message is named), with bounded threads however many calls are open: gRPC's own
// few, and a fixed pool of `threads` that parses inference requests and encodes their answers.
// No thread waits for a model: ModelInfer is admitted by its size into the in-flight budget
// (RESOURCE_EXHAUSTED past it), takes the bound of its answer too once parsed (answer_size.hpp),
// is queued (UNAVAILABLE when the model's queue is full), and answered from the model's callback.
// Health, metadata and statistics are answered on gRPC's thread at once.
//
// gRPC reads a message whole before it hands it over, so what arrives is bounded before the
// server sees a message's size by gRPC's resource quota: a part of the in-flight budget set aside
// for it (grpc_receive_bytes, request_intake::set_aside), which is also the largest message taken.
// Past it gRPC refuses streams itself (RESOURCE_EXHAUSTED, "Buffers full"). A message read is
// admitted into the rest of the budget by its size before it is parsed, and parsed letting go of
// its bytes as it goes (grpc_message_stream.hpp).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "serve/service/inference_service.hpp"

namespace ferry::serve {

struct grpc_options {
  std::string host = "127.0.0.1";  // this machine only; "0.0.0.0": every interface
  int port = 8001;                 // 0: any free port (start() returns it)
  // The largest message: of a request, at most grpc_receive_bytes; of an answer, this.
  std::size_t max_message_bytes = std::size_t{1} << 30;
  int threads = 0;       // parse inference requests and encode their answers; 0: one per CPU core, at least 2
  int max_threads = 64;  // gRPC's ResourceQuota: the threads its synchronous paths may start
};

// What gRPC may hold of messages still arriving, out of an in-flight budget of `budget_bytes`: a
// quarter of it, at most options.max_message_bytes.
[[nodiscard]] std::size_t grpc_receive_bytes(const grpc_options& options, std::size_t budget_bytes);

class grpc_frontend {
 public:
  grpc_frontend(inference_service& service, const grpc_options& options);
  ~grpc_frontend();
  grpc_frontend(const grpc_frontend&) = delete;
  grpc_frontend& operator=(const grpc_frontend&) = delete;

  // Starts serving on gRPC's own threads and returns the bound port. Throws ferry::error when the
  // port cannot be bound.
  [[nodiscard]] int start();
  // Refuses new calls (UNAVAILABLE) at once, and returns once every call accepted is answered.
  void stop();

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace ferry::serve
