#include "serve/scheduling/batching_policy.hpp"

#include <algorithm>

namespace ferry::serve {
namespace {

// The latest time the batch may wait to, by the latency target: the oldest request's arrival
// plus the target, less the run time of the bucket the batch would join with one more row.
steady_time target_deadline(const batching_rules& rules, steady_time oldest, std::int64_t rows) {
  std::chrono::nanoseconds run{0};
  if (!rules.bucket_run_times.empty()) {
    const std::size_t b = bucket_index(rules.buckets, std::min(rows + 1, rules.max_batch));
    run = rules.bucket_run_times[std::min(b, rules.bucket_run_times.size() - 1)];
  }
  return oldest + *rules.latency_target - std::chrono::duration_cast<steady_time::duration>(run);
}

// When the batch stops waiting for more rows; none when it must not wait at all.
std::optional<steady_time> wait_bound(const batching_rules& rules, steady_time oldest, std::int64_t rows,
                                      worker_view workers) {
  const bool delayed = rules.delay.count() > 0;
  std::optional<steady_time> by_target;
  if (rules.latency_target && !workers.another_idle) by_target = target_deadline(rules, oldest, rows);
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
  const std::optional<steady_time> until = wait_bound(rules, queue.front().arrived, rows, workers);
  if (!until || now >= *until) return {.take = take, .wait_until = std::nullopt};
  return {.take = 0, .wait_until = until};
}

}  // namespace ferry::serve
