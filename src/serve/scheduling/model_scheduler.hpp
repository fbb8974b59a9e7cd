// One model's request queue and the workers that drain it (docs/ARCHITECTURE.md §4 slots, seen
// from the server): each worker forms a batch, runs it on the executor and answers every request
// in it from its own rows. Workers run batches concurrently, so a slow batch holds one worker, not
// the queue; a batch whose run fails is retried request by request, so only the request that
// fails gets the error.
//
// The scheduler composes four parts, each in its own file, and owns the threads and the one
// mutex they share:
//   request_queue        the waiting requests in arrival order and their deadlines
//                        (back-pressure: at most max_queue_size wait, one more is refused at once
//                        as unavailable; a request still queued at its timeout is withdrawn by
//                        the deadline thread and answered timed_out, so no front-end thread waits
//                        for it)
//   batcher              a group's next batch from the queue (batching_policy)
//   worker_placement     the workers grouped by GPU, which group sees a request, their load
//                        (request_placement), and the condition variables idle workers wait on
//   scheduler_lifecycle  ready / draining / unloaded / shutting_down, and its transitions
//
// Thread safety: `mutex_` guards all four parts and is the only lock; none of them locks on its
// own. A request is in exactly one place at a time, moved as a unique_ptr: the queue, one
// worker's batch, or the hands of the thread answering it. Callbacks are called, and requests
// dropped (which may unmap their shared-memory regions), outside the lock. Once a worker has
// started a request it is waited for however long it runs: the run reads the client's buffers
// (an HTTP body, a gRPC message), which must outlive it, and no request is ever answered with a
// result that is not its own.
//
// Answers are delivered asynchronously: each request's callback is called exactly once, with its
// response or its error, on the thread that settled it (a worker, the deadline thread, or the
// destructor for requests still queued), so front ends never block a thread on a model.
//
// Unloading: stop() refuses new requests, waits for every request already queued or running to be
// answered, then stops the workers and releases the executor (its sessions, buffers and engines),
// so an unloaded model's memory comes back while callers may still hold the scheduler.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "serve/execution/executor.hpp"
#include "serve/observability/model_statistics.hpp"
#include "serve/scheduling/batcher.hpp"
#include "serve/scheduling/batching_policy.hpp"
#include "serve/scheduling/request_queue.hpp"
#include "serve/scheduling/scheduled_request.hpp"
#include "serve/scheduling/scheduler_lifecycle.hpp"
#include "serve/scheduling/submission.hpp"
#include "serve/scheduling/worker_placement.hpp"
#include "serve/vocabulary/model_signature.hpp"

namespace ferry::serve {

class model_scheduler {
 public:
  // Returns once every worker waits for work, so placement counts them all from the first request.
  // At most `max_queue_size` requests wait for a worker (0: no limit).
  model_scheduler(std::string model, std::string version, std::shared_ptr<executor> exec, model_signature signature,
                  batching_rules rules, model_statistics& stats, std::size_t max_queue_size = 0);
  // Stops the workers after their current batch; requests still queued fail as unavailable.
  ~model_scheduler();
  model_scheduler(const model_scheduler&) = delete;
  model_scheduler& operator=(const model_scheduler&) = delete;

  // Queues a checked request (plan_request); `done` receives its response or request_error.
  // Throws request_error, without calling `done`: bad_request when its CUDA inputs are on two GPUs
  // or on a GPU this model has no worker on (required_gpu), unavailable when max_queue_size
  // requests are waiting.
  void submit(submission work, infer_callback done);
  // The same, for a caller that waits for the answer.
  [[nodiscard]] pending_response submit(submission work);
  // Requests waiting for a worker.
  [[nodiscard]] std::size_t pending() const;
  // Requests being run now, per device the workers run on (none: the host), in group order.
  [[nodiscard]] std::vector<std::pair<std::optional<int>, std::size_t>> running() const;
  // Refuses new requests (unavailable, "being unloaded"), waits until every request queued or
  // running has been answered, then stops the workers and releases the executor. Idempotent; a
  // second call while one waits returns with it, leaving the joins and the release to the first.
  void stop();
  [[nodiscard]] std::size_t max_queue_size() const noexcept { return queue_.capacity(); }
  // Where the lifecycle stands (for tests and logs).
  [[nodiscard]] scheduler_state state() const;

 private:
  using batch = std::vector<std::unique_ptr<scheduled_request>>;
  // The deadline thread: withdraws each request still queued at its deadline and answers it
  // timed_out.
  void expire();
  void work(int worker);
  // Waits for and takes the next batch group `g` may run; empty once the threads stop.
  [[nodiscard]] batch next_batch(std::size_t g, std::unique_lock<std::mutex>& lock);
  // Runs `jobs` as one batch (each alone when the batch fails), leaving each its response or failure.
  void run(std::span<const std::unique_ptr<scheduled_request>> jobs, int worker);
  // Calls every request's callback with what run left it.
  static void answer(batch jobs);
  // Fails a request that will never run (timed out, or the scheduler stopping). `why` is the only
  // copy of its error: the message's string is shared by copies of a std::runtime_error, and its
  // count kept by the standard library where a thread sanitizer cannot see it, so no copy may be
  // dropped on this thread once the callback has handed the error to another.
  static void fail(std::unique_ptr<scheduled_request> r, std::exception_ptr why);

  // Set at construction, then only read (exec_ is released by stop() once the threads are gone).
  std::string model_, version_;
  std::shared_ptr<executor> exec_;
  model_signature signature_;
  model_statistics& stats_;  // thread-safe on its own

  // Guards the four parts below and is waited on through the condition variables after them.
  mutable std::mutex mutex_;
  scheduler_lifecycle lifecycle_;
  request_queue queue_;
  batcher batcher_;
  worker_placement placement_;
  // The deadline thread waits on it for the queue's first deadline, or a sooner one (submit).
  std::condition_variable deadline_changed_;
  // A request was answered or withdrawn while stop() waits for none to be left.
  std::condition_variable idle_;

  std::latch up_;  // counts workers down as they first wait for work
  std::vector<std::thread> workers_;
  std::thread deadline_thread_;
};

}  // namespace ferry::serve
