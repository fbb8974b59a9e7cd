// The dynamic-batching decision and the batch buckets, as pure functions of the queue so they are
// tested without threads or clocks.
//
// Requests leave the queue in arrival order (a later small request never overtakes an earlier
// large one). A batch is the longest prefix of the queue whose rows fit in max_batch; it goes as
// soon as it is full or the next request would not fit. Until then it may wait for more rows:
//   - batch_delay (Triton's max_queue_delay): its first request waits at most that long;
//   - latency_target: waiting is worth it only while the GPU is busy with the model's other
//     batches (a worker of the group besides this one is running: with one idle, a second batch
//     runs beside this one at no cost to it), and only while the oldest request would still be
//     answered within the target: its wait so far plus the measured run time of the bucket the
//     batch would join with one more row; and only while rows keep coming (the newest arrived
//     less than that run time ago). With both, the sooner bound holds.
//   - with neither, what is queued runs as soon as a worker is free.
// The batch then runs at its bucket: the smallest batch size of the model's buckets that holds
// its rows (padded rows are never answered).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "serve/execution/batch_buckets.hpp"

namespace ferry::serve {

using steady_time = std::chrono::steady_clock::time_point;

struct queued_request {
  std::int64_t rows = 1;
  steady_time arrived;
};

struct batching_rules {
  std::int64_t max_batch = 0;  // 0: no batching, one request per engine run
  std::chrono::microseconds delay{0};
  std::optional<std::chrono::microseconds> latency_target;
  // The batch sizes runs take (ascending, the last max_batch) and each one's run time as measured
  // when the model loaded (empty when not measured: taken as 0).
  std::vector<std::int64_t> buckets;
  std::vector<std::chrono::nanoseconds> bucket_run_times;
};

// What the batcher knows of the workers besides the one forming a batch.
struct worker_view {
  bool another_idle = false;  // another worker of the group waits for work
};

struct batch_decision {
  std::size_t take = 0;                   // > 0: run the first `take` queued requests now
  std::optional<steady_time> wait_until;  // take == 0: wait for a new request or this time
};

[[nodiscard]] batch_decision decide_batch(std::span<const queued_request> queue, const batching_rules& rules,
                                          steady_time now, worker_view workers = {}) noexcept;

}  // namespace ferry::serve
