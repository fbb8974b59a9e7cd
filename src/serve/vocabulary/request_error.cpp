#include "serve/vocabulary/request_error.hpp"

#include <array>

namespace ferry::serve {
namespace {

struct protocol_statuses {
  error_status status;
  int http;
  int grpc;  // grpc::StatusCode by number
};

// gRPC's codes by number (grpc/status.h): 3 INVALID_ARGUMENT, 4 DEADLINE_EXCEEDED, 5 NOT_FOUND,
// 7 PERMISSION_DENIED, 8 RESOURCE_EXHAUSTED, 12 UNIMPLEMENTED, 13 INTERNAL, 14 UNAVAILABLE.
constexpr std::array<protocol_statuses, 10> statuses{{
    {error_status::bad_request, 400, 3},
    {error_status::not_found, 404, 5},
    {error_status::unavailable, 503, 14},
    {error_status::forbidden, 403, 7},
    {error_status::payload_too_large, 413, 8},
    {error_status::quota_exceeded, 429, 8},
    {error_status::timed_out, 504, 4},
    {error_status::not_implemented, 501, 12},
    {error_status::internal, 500, 13},
    {error_status::out_of_memory, 503, 8},
}};

const protocol_statuses& row(error_status status) noexcept {
  for (const auto& r : statuses)
    if (r.status == status) return r;
  return statuses[8];  // internal: unreachable for a valid status
}

}  // namespace

int http_status(error_status status) noexcept { return row(status).http; }
int grpc_status_code(error_status status) noexcept { return row(status).grpc; }

}  // namespace ferry::serve
