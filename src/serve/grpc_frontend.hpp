// The KServe v2 gRPC front end (inference.GRPCInferenceService from proto/kserve_v2.proto, on
// Debian's gRPC): health, metadata, ModelInfer with raw_input_contents / raw_output_contents,
// statistics, the repository index and the shared-memory RPCs. Errors carry the status code the
// protocol's HTTP status maps to and the same message as over HTTP.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "serve/inference_service.hpp"

namespace ferry::serve {

struct grpc_options {
  std::string host = "0.0.0.0";
  int port = 8001;  // 0: any free port (start() returns it)
  std::size_t max_message_bytes = std::size_t{1} << 30;
};

class grpc_frontend {
 public:
  grpc_frontend(inference_service& service, const grpc_options& options);
  ~grpc_frontend();
  grpc_frontend(const grpc_frontend&) = delete;
  grpc_frontend& operator=(const grpc_frontend&) = delete;

  // Starts serving on gRPC's own threads and returns the bound port. Throws ferry::error when the
  // port cannot be bound.
  [[nodiscard]] int start();
  void stop();

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace ferry::serve
