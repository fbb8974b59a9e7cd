// One model's request queue and the workers that drain it (docs/ARCHITECTURE.md §4 slots, seen from the
// server): each worker forms a batch with decide_batch, runs it on the executor and answers every
// request in it from its own rows. Workers run batches concurrently, so a slow batch holds one
// worker, not the queue; a batch whose run fails is retried request by request, so only the
// request that fails gets the error.
//
// Workers are grouped by the GPU they run on (executor::worker_device). A request whose inputs
// are in a CUDA region is only seen by its GPU's workers; one without may run anywhere and is
// seen by the group the library's placement_policy picks to spread load (request_placement.hpp). A worker forms its
// batch with decide_batch over the requests it sees, in arrival order, so batching works as before within each GPU.
// Each group has its own condition variable, woken when it has something to take, so a request is never left waiting
// while a worker that may run it sleeps.
//
// Back-pressure: at most max_queue_size requests wait (0 for no limit); one more is refused at
// once as unavailable. A request may have a timeout: still queued when it passes, it is taken out
// of the queue and answered timed_out by the scheduler's deadline thread, so no front-end thread
// waits for it. Once a worker has started it, it is waited for however long it runs: the run
// reads the client's buffers (an HTTP body, a gRPC message), which must outlive it, and no request
// is ever answered with a result that is not its own.
//
// Answers are delivered asynchronously: each request's callback is called exactly once, with its
// response or its error, on the thread that settled it (a worker, the deadline thread, or the
// destructor for requests still queued), so front ends never block a thread on a model.
//
// Unloading: stop() refuses new requests, waits for every request already queued or running to be
// answered, then stops the workers and releases the executor (its sessions, buffers and engines),
// so an unloaded model's memory comes back while callers may still hold the scheduler.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "ferry/placement.hpp"
#include "serve/execution/executor.hpp"
#include "serve/observability/model_statistics.hpp"
#include "serve/scheduling/batching_policy.hpp"
#include "serve/scheduling/request_placement.hpp"

namespace ferry::serve {

// What a queued request needs besides itself: where its shared-memory outputs go.
struct submission {
  infer_request request;
  request_plan plan;
  std::vector<output_destination> output_destinations;  // see batch_item
  // Keeps the shared-memory regions the request reads or writes mapped until it is answered,
  // even when a client unregisters them meanwhile.
  std::vector<std::shared_ptr<const void>> pinned_regions;
  // The longest the request may wait for a worker; none: as long as it takes.
  std::optional<std::chrono::microseconds> timeout;
};

// A request's outcome: its response, or (failure set) the request_error of its failed run or of
// its timeout.
struct infer_result {
  infer_response response;
  std::exception_ptr failure;
};

// Receives a request's outcome. Called exactly once, on a worker or the scheduler's own threads:
// it must return quickly (hand work elsewhere) and must not throw.
using infer_callback = std::function<void(infer_result)>;

// A queued request's answer, for callers that wait for it (tests, tools).
class pending_response {
 public:
  // Waits for the response and returns it. Throws the request's request_error: that of its failed
  // run, or timed_out when it was still queued at its deadline (it is then withdrawn, never run).
  [[nodiscard]] infer_response get() { return answer_.get(); }

 private:
  friend class model_scheduler;
  explicit pending_response(std::shared_ptr<std::promise<infer_response>> promise)
      : promise_(std::move(promise)), answer_(promise_->get_future()) {}
  // Held here too, so the answer (an error's exception object among it) is released by the
  // caller's thread, never by the scheduler's after the caller has read it: a thread sanitizer
  // cannot see the exception's reference count, and would report that release as a race.
  std::shared_ptr<std::promise<infer_response>> promise_;
  std::future<infer_response> answer_;
};

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
  // running has been answered, then stops the workers and releases the executor. Idempotent.
  void stop();
  [[nodiscard]] std::size_t max_queue_size() const noexcept { return max_queue_size_; }

 private:
  struct job;
  using deadline_table = std::multimap<steady_time, job*>;
  // The deadline thread: withdraws each request still queued at its deadline and answers it
  // timed_out.
  void expire();
  void work(int worker);
  // Waits for and takes the next batch group `g` may run; empty once stopping.
  [[nodiscard]] std::vector<std::unique_ptr<job>> next_batch(std::size_t g, std::unique_lock<std::mutex>& lock);
  // Whether group `g` may run `j` now (under the lock; `unplaced_group` from placement_.peek).
  [[nodiscard]] bool may_run(std::size_t g, const job& j, std::optional<std::size_t> unplaced_group) const;
  // Wakes one worker of every group that has something to take (under the lock).
  void offer_work();
  // Runs `jobs` as one batch (each alone when the batch fails), leaving each its response or failure.
  void run(std::span<const std::unique_ptr<job>> jobs, int worker);
  // Calls every job's callback with what run left it.
  static void answer(std::vector<std::unique_ptr<job>> jobs);
  // Fails a request that will never run (timed out, or the scheduler stopping). `why` is the only
  // copy of its error: the message's string is shared by copies of a std::runtime_error, and its
  // count kept by the standard library where a thread sanitizer cannot see it, so no copy may be
  // dropped on this thread once the callback has handed the error to another.
  static void fail(std::unique_ptr<job> j, std::exception_ptr why);

  std::string model_, version_;
  std::shared_ptr<executor> exec_;
  model_signature signature_;
  batching_rules rules_;
  model_statistics& stats_;
  std::size_t max_queue_size_;
  std::vector<int> gpus_;  // the GPUs the model has workers on, for required_gpu
  mutable std::mutex mutex_;
  std::deque<std::unique_ptr<job>> queue_;
  // The queued requests that have a deadline, soonest first (each job keeps its entry, erased
  // when a worker takes it); the deadline thread waits on `deadline_changed_` for the first.
  deadline_table deadlines_;
  std::condition_variable deadline_changed_;
  // When the deadline thread next looks at the table: the first deadline when it went to sleep
  // (a request a worker took since leaves it there), max while the table is empty. A new
  // deadline wakes the thread only when it is sooner.
  steady_time deadline_wake_ = steady_time::max();
  // Worker groups, one per GPU (or one for the host), by index: the GPU, the load the spreading
  // rule reads (slots: the group's workers; busy: those not waiting for work, which are those
  // running a batch once all are up), and the condition variable its idle workers wait on (a
  // deque: they cannot move).
  std::vector<std::optional<int>> group_devices_;
  std::vector<replica_load> loads_;
  std::deque<std::condition_variable> wake_;
  std::vector<std::size_t> group_of_;  // per worker
  placement_policy placement_;         // the spreading rule and its turn for ties
  [[nodiscard]] std::optional<std::size_t> group_for_unplaced() const;
  std::vector<std::size_t> running_;  // per group: requests of the batches its workers run
  std::condition_variable idle_;      // a batch was answered (stop() waits for none left)
  bool unloading_ = false;            // stop() began: submit refuses
  bool stopped_ = false;              // workers joined, executor released
  bool stopping_ = false;
  std::latch up_;  // counts workers down as they first wait for work
  std::vector<std::thread> workers_;
  std::thread deadline_thread_;
};

}  // namespace ferry::serve
