#include "serve/scheduling/batching_policy.hpp"

#include <algorithm>

namespace ferry::serve {
namespace {

// The latest time the batch may wait to, by the latency target: the oldest request's arrival
// plus the target, less the run time of the bucket the batch would join with one more row; and no
// later than that run time after the newest arrival: rows that stopped coming for as long as a run
// takes are not worth waiting for (a closed loop of clients whose last few are on their way back
// would otherwise hold every batch to the target).
steady_time target_deadline(const batching_rules& rules, std::span<const queued_request> batch, std::int64_t rows) {
  std::chrono::nanoseconds run{0};
  if (!rules.bucket_run_times.empty()) {
    const std::size_t b = bucket_index(rules.buckets, std::min(rows + 1, rules.max_batch));
    run = rules.bucket_run_times[std::min(b, rules.bucket_run_times.size() - 1)];
  }
  const auto run_time = std::chrono::duration_cast<steady_time::duration>(run);
  const steady_time in_time = batch.front().arrived + *rules.latency_target - run_time;
  if (run_time.count() == 0) return in_time;
  return std::min(in_time, batch.back().arrived + run_time);
}

// When the batch of the queue's first `take` requests stops waiting for more rows; none when it
// must not wait at all.
std::optional<steady_time> wait_bound(const batching_rules& rules, std::span<const queued_request> batch,
                                      std::int64_t rows, worker_view workers) {
  const steady_time oldest = batch.front().arrived;
  const bool delayed = rules.delay.count() > 0;
  std::optional<steady_time> by_target;
  if (rules.latency_target && !workers.another_idle) by_target = target_deadline(rules, batch, rows);
  if (!delayed) return by_target;
  const steady_time by_delay = oldest + rules.delay;
  return by_target ? std::min(*by_target, by_delay) : by_delay;
}

}  // namespace

batch_decision decide_batch(std::span<const queued_request> queue, const batching_rules& rules, steady_time now,
                            worker_view workers) noexcept {
  if (queue.empty()) return {};
  if (rules.max_batch <= 0) return {.take = 1, .wait_until = std::nullopt};
  std::size_t take = 0;
  std::int64_t rows = 0;
  // The first request always goes (validation capped its rows at max_batch).
  while (take < queue.size() && (take == 0 || rows + queue[take].rows <= rules.max_batch)) {
    rows += queue[take].rows;
    ++take;
  }
  const bool full = rows >= rules.max_batch;
  const bool next_does_not_fit = take < queue.size();
  if (full || next_does_not_fit) return {.take = take, .wait_until = std::nullopt};
  const std::optional<steady_time> until = wait_bound(rules, queue.first(take), rows, workers);
  if (!until || now >= *until) return {.take = take, .wait_until = std::nullopt};
  return {.take = 0, .wait_until = until};
}

}  // namespace ferry::serve
