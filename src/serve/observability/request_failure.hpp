// What a request's failure is, said once for every place that catches one (the HTTP and gRPC
// front ends, the scheduler around a run): the exception in flight as a request_error, whose
// status each protocol answers from one table (request_error.hpp).
//   request_error                        as it is
//   std::bad_alloc                       out_of_memory at the stage that needed the memory, counted
//   ferry::invalid_argument (an index
//   out of range found on the GPU too)   bad_request: the request's own mistake
//   nlohmann::json::exception            bad_request: only clients' JSON is read where one escapes
//   anything else                        internal
#pragma once

#include <string_view>

#include "serve/observability/allocation_failures.hpp"
#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve {

// Call inside a catch block. `context` starts the message of what was not already a request_error
// ("model 'm': inference failed: "), never of one that was.
[[nodiscard]] request_error current_request_error(allocation_stage stage, std::string_view context = {});

}  // namespace ferry::serve
