// The error a request can meet, carrying the status the KServe v2 protocol answers it with.
//
// Front ends turn it into an HTTP status and {"error": "..."} or a gRPC status; the message
// always names the problem (the model, the tensor, the expected and the received value).
#pragma once

#include <string>

#include "ferry/core/error.hpp"

namespace ferry::serve {

enum class error_status {
  bad_request,        // malformed or inconsistent request: HTTP 400, gRPC INVALID_ARGUMENT
  not_found,          // unknown model, version, region: HTTP 404, gRPC NOT_FOUND
  unavailable,        // the model is not ready, or its queue is full: HTTP 503, gRPC UNAVAILABLE
  forbidden,          // an extension switched off on this server: HTTP 403, gRPC PERMISSION_DENIED
  payload_too_large,  // a size limit of the server: HTTP 413, gRPC RESOURCE_EXHAUSTED
  quota_exceeded,     // a count the server limits is reached (registered regions): HTTP 429, gRPC RESOURCE_EXHAUSTED
  timed_out,          // the request's timeout passed before it ran: HTTP 504, gRPC DEADLINE_EXCEEDED
  not_implemented,    // a protocol feature this server does not serve yet: HTTP 501, gRPC UNIMPLEMENTED
  internal,           // the engine failed: HTTP 500, gRPC INTERNAL
  out_of_memory,      // memory for the request could not be allocated: HTTP 503, gRPC RESOURCE_EXHAUSTED
};

class request_error : public ferry::error {
 public:
  request_error(error_status status, const std::string& message) : error(message), status_(status) {}
  [[nodiscard]] error_status status() const noexcept { return status_; }

 private:
  error_status status_;
};

[[nodiscard]] inline request_error bad_request(const std::string& message) {
  return {error_status::bad_request, message};
}

// What each protocol answers a request_error with, from one table (request_error.cpp): the HTTP
// status, and the gRPC code by its number (grpc::StatusCode's: INVALID_ARGUMENT is 3), so that this
// floor needs no gRPC header and both front ends say the same thing of the same error.
[[nodiscard]] int http_status(error_status status) noexcept;
[[nodiscard]] int grpc_status_code(error_status status) noexcept;

}  // namespace ferry::serve
