// Forms a worker group's next batch from the queue by the dynamic-batching rule
// (batching_policy.hpp's decide_batch): over the requests the group may run, in arrival order,
// the longest prefix that fits max_batch, once it is full, the next request would not fit, or its
// first request has waited batch_delay.
//
// Thread safety: none of its own. It reads and takes from the scheduler's request_queue, so it is
// called under the scheduler's mutex, by the worker that then runs what it took.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "serve/scheduling/batching_policy.hpp"
#include "serve/scheduling/request_queue.hpp"
#include "serve/scheduling/scheduled_request.hpp"

namespace ferry::serve {

class batcher {
 public:
  explicit batcher(batching_rules rules) : rules_(rules) {}

  // A batch taken out of the queue to run now, or none yet: then the worker waits for a new
  // request, or until `wait_until` when set (the first request's batch_delay runs out).
  struct formed {
    std::vector<std::unique_ptr<scheduled_request>> batch;
    std::optional<steady_time> wait_until;
  };
  // Forms a batch from the waiting requests for which `may_run` holds; `workers` says whether
  // another worker of the group is idle (a latency target waits only while none is).
  [[nodiscard]] formed form(request_queue& queue, const std::function<bool(const scheduled_request&)>& may_run,
                            worker_view workers = {}) const;

 private:
  batching_rules rules_;
};

}  // namespace ferry::serve
