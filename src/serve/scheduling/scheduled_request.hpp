// One request on its way through a model's scheduler: what was submitted, where it may run, its
// outcome once run, the callback that receives it, and its times. The queue, the batcher and the
// workers pass it along as a unique_ptr, so exactly one of them holds it at any moment.
#pragma once

#include <exception>
#include <map>
#include <optional>

#include "serve/scheduling/batching_policy.hpp"
#include "serve/scheduling/submission.hpp"
#include "serve/vocabulary/inference.hpp"

namespace ferry::serve {

struct scheduled_request;
// The queued requests that have a deadline, soonest first (request_queue).
using deadline_table = std::multimap<steady_time, scheduled_request*>;

struct scheduled_request {
  submission work;
  std::optional<int> gpu;  // set: only this GPU's workers may run it (its CUDA inputs are there)
  infer_response response;
  std::exception_ptr failure;  // set: the run failed, answer with this instead
  infer_callback done;
  steady_time arrived;
  steady_time started;
  std::optional<deadline_table::iterator> deadline;  // its entry while queued with a deadline
};

}  // namespace ferry::serve
