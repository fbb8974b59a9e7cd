// One model's requests waiting for a worker, in arrival order, with their deadlines: the queue
// max_queue_size bounds, and the table the scheduler's deadline thread withdraws requests from
// once their timeout passes while they still wait.
//
// Thread safety: none of its own. The model_scheduler that owns it calls every member under its
// one mutex, the same that guards the lifecycle, the batcher's view of the queue and the workers'
// load (worker_placement). So a request leaves the queue exactly once, to exactly one of: a
// worker's batch (take), the deadline thread (withdraw_expired) or the destructor (take_all), and
// a request taken for a batch has lost its deadline in the same step, so it can never also time
// out.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "serve/scheduling/batching_policy.hpp"
#include "serve/scheduling/scheduled_request.hpp"

namespace ferry::serve {

// The deadline of a request that arrived at `arrived` and may wait `timeout`; none without a
// timeout, or with one so long that the deadline would overflow the clock.
[[nodiscard]] std::optional<steady_time> deadline_after(steady_time arrived,
                                                        std::optional<std::chrono::microseconds> timeout);

class request_queue {
 public:
  using entries = std::deque<std::unique_ptr<scheduled_request>>;

  // At most `capacity` requests wait (0: no limit).
  explicit request_queue(std::size_t capacity) : capacity_(capacity) {}

  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::size_t size() const noexcept { return queue_.size(); }
  [[nodiscard]] bool empty() const noexcept { return queue_.empty(); }
  // Whether one more request must be refused: `capacity` of them wait already.
  [[nodiscard]] bool full() const noexcept { return capacity_ > 0 && queue_.size() >= capacity_; }
  // The waiting requests, in arrival order.
  [[nodiscard]] const entries& waiting() const noexcept { return queue_; }

  // Queues `r` last, with `deadline` when it has one. Returns whether the deadline thread must be
  // woken: the deadline comes before the thread next looks at the table.
  [[nodiscard]] bool push(std::unique_ptr<scheduled_request> r, std::optional<steady_time> deadline);
  // Takes the requests at `positions` (indexes into waiting(), ascending) out of the queue, in
  // that order, for a batch: from now on they run, so they have no deadline.
  [[nodiscard]] std::vector<std::unique_ptr<scheduled_request>> take(std::span<const std::size_t> positions);
  // Takes every request out, deadlines and all (the scheduler's destructor, its threads gone).
  [[nodiscard]] entries take_all();

  // The deadline thread's side. The soonest deadline of a waiting request; none when no waiting
  // request has one.
  [[nodiscard]] std::optional<steady_time> first_deadline() const;
  // Records when the deadline thread next looks at the table (max: only when woken), so that
  // push() wakes it only for a deadline sooner than that. With one timeout for every request each
  // new deadline is later, so requests do not wake the thread one by one.
  void deadline_thread_sleeps_until(steady_time t) noexcept { deadline_wake_ = t; }
  // Takes out every request whose deadline is at or before `now`, soonest deadline first.
  [[nodiscard]] std::vector<std::unique_ptr<scheduled_request>> withdraw_expired(steady_time now);

 private:
  std::size_t capacity_;
  entries queue_;
  // The waiting requests that have a deadline, soonest first; each request keeps its entry's
  // iterator, erased when it leaves the queue.
  deadline_table deadlines_;
  // When the deadline thread next looks at the table: the first deadline when it went to sleep
  // (a request a worker took since leaves it there), max while the table is empty.
  steady_time deadline_wake_ = steady_time::max();
};

}  // namespace ferry::serve
