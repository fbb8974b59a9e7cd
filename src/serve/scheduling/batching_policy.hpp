// The dynamic-batching decision, as a pure function of the queue so it is tested without
// threads or clocks.
//
// Requests leave the queue in arrival order (a later small request never overtakes an earlier
// large one). A batch is the longest prefix of the queue whose rows fit in max_batch; it goes
// as soon as it is full, as soon as the next request would not fit, or once its first request
// has waited batch_delay; until then the worker waits for more requests to join.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace ferry::serve {

using steady_time = std::chrono::steady_clock::time_point;

struct queued_request {
  std::int64_t rows = 1;
  steady_time arrived;
};

struct batching_rules {
  std::int64_t max_batch = 0;  // 0: no batching, one request per engine run
  std::chrono::microseconds delay{0};
};

struct batch_decision {
  std::size_t take = 0;                   // > 0: run the first `take` queued requests now
  std::optional<steady_time> wait_until;  // take == 0: wait for a new request or this time
};

[[nodiscard]] batch_decision decide_batch(std::span<const queued_request> queue, const batching_rules& rules,
                                          steady_time now) noexcept;

}  // namespace ferry::serve
