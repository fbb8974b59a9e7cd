// Requests that failed because memory for them could not be allocated (std::bad_alloc: the
// process's address-space limit, a cgroup's, or the allocator's own), by the step that needed it.
// Such a request is answered HTTP 503 / gRPC RESOURCE_EXHAUSTED and the server goes on: running
// out of memory for one large request is that request's failure, never the process's.
//
// Counted for the whole process (one server runs in it), shown in /metrics as
// ferry_allocation_failures{stage="..."}.
#pragma once

#include <cstdint>
#include <string>

#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve {

enum class allocation_stage {
  receive,  // reading the request's bytes
  decode,   // parsing the request into tensors, checking and queueing it
  execute,  // the model's run (its engine's buffers)
  answer,   // encoding the answer
};

// Counts one failure at `stage` and returns the error that answers the request.
[[nodiscard]] request_error allocation_failure(allocation_stage stage);

[[nodiscard]] std::uint64_t allocation_failures(allocation_stage stage) noexcept;

// The counters in Prometheus' text format, every stage (zeros too).
[[nodiscard]] std::string render_allocation_failures();

}  // namespace ferry::serve
