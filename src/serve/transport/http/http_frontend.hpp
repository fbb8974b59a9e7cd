// The KServe v2 HTTP/REST front end: health, metadata, inference with the binary tensor data
// extension, statistics, the repository index, system and CUDA shared memory and /metrics, as
// routes over http_transport (Boost.Beast). Every error answers with the protocol's status and
// {"error": "..."}; the server keeps serving.
//
// No thread waits for a model. Health, metadata, statistics and /metrics are answered on the
// transport's I/O threads at once; an inference request is decided from its headers (unknown
// model, wrong content type, too large, no room in the in-flight budget: answered unread), its
// body is decoded on a small pool of `threads` threads, queued, and its answer encoded on the
// pool when the model's callback comes. Small ones skip the pool, whose hand-overs would cost
// them more than the work: a body of a few KiB is decoded on the I/O thread, and an answer with
// a few KiB of tensor data (none when the outputs go to shared memory) is encoded on the model's
// worker, so such a request crosses threads twice, to its model and back.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "serve/codec/http_infer_codec.hpp"
#include "serve/service/inference_service.hpp"
#include "serve/transport/http/http_transport.hpp"

namespace ferry::serve {

// The transport's settings (host, port, body limit, deadlines) and the inference codec's limits.
// max_body_bytes is the limit of inference requests (limits.max_inference_header_bytes for one
// that is all JSON); every other route takes a small JSON body or none, and refuses one over
// max_small_body_bytes (413) before it is read.
struct http_options : http_transport_options {
  http_limits limits;
  std::size_t max_small_body_bytes = std::size_t{64} << 10;
  int threads = 0;  // decode request bodies and encode answers; 0: one per CPU core, at least 2
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
