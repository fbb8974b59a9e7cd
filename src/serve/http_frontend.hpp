// The KServe v2 HTTP/REST front end: health, metadata, inference with the binary tensor data
// extension, statistics, the repository index, system and CUDA shared memory and /metrics, as
// routes over http_transport (Boost.Beast). Every error answers with the protocol's status and
// {"error": "..."}; the server keeps serving.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "serve/http_infer_codec.hpp"
#include "serve/http_transport.hpp"
#include "serve/inference_service.hpp"

namespace ferry::serve {

// The transport's settings (host, port, threads, body limit) and the inference codec's limits.
// max_body_bytes is the limit of inference requests; every other route takes a small JSON body
// or none, and refuses one over max_small_body_bytes (413) before it is read.
struct http_options : http_transport_options {
  http_limits limits;
  std::size_t max_small_body_bytes = std::size_t{64} << 10;
};

class http_frontend {
 public:
  http_frontend(inference_service& service, const http_options& options);
  ~http_frontend();
  http_frontend(const http_frontend&) = delete;
  http_frontend& operator=(const http_frontend&) = delete;

  // Binds the listening socket and returns the port. Throws ferry::error when it cannot.
  [[nodiscard]] int bind();
  // Serves until stop(); blocking.
  void serve_blocking();
  void stop();

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace ferry::serve
