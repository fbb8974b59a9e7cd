#include "serve/request_error.hpp"

namespace ferry::serve {

int http_status(error_status status) noexcept {
  switch (status) {
    case error_status::bad_request:
      return 400;
    case error_status::not_found:
      return 404;
    case error_status::unavailable:
      return 503;
    case error_status::forbidden:
      return 403;
    case error_status::payload_too_large:
      return 413;
    case error_status::quota_exceeded:
      return 429;
    case error_status::timed_out:
      return 504;
    case error_status::not_implemented:
      return 501;
    case error_status::internal:
      return 500;
    case error_status::out_of_memory:
      return 503;
  }
  return 500;
}

}  // namespace ferry::serve
