// Placement over a model's workers: they are grouped by the device they run on
// (executor::worker_device: a GPU, or one group for the host), and a queued request is seen by
// one group. A request whose inputs are in a CUDA region is seen by its GPU's group only; one
// without is seen by the group the library's placement_policy picks to spread load
// (request_placement.hpp). Each group's idle workers wait on a condition variable of their own,
// woken when the queue holds something the group may take, so a request is never left waiting
// while a worker that may run it sleeps, and idle workers never wake each other in a loop.
//
// It keeps each group's load as the spreading rule reads it (slots: the group's workers; busy:
// those not waiting for work, which are those running a batch once all are up) and how many
// requests each group's batches hold (running()).
//
// Thread safety: none of its own. Every member is called under the scheduler's mutex, which
// guards the queue the groups are offered work from as well; wait() releases that mutex while
// the worker sleeps, as a condition variable does.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "ferry/session/placement.hpp"
#include "serve/execution/executor.hpp"
#include "serve/scheduling/batching_policy.hpp"
#include "serve/scheduling/request_queue.hpp"
#include "serve/scheduling/scheduled_request.hpp"

namespace ferry::serve {

class worker_placement {
 public:
  // The groups of `exec`'s workers. Each worker counts as busy until it first waits for work
  // (worker_waiting), so placement counts only workers that are up.
  explicit worker_placement(const executor& exec);
  worker_placement(const worker_placement&) = delete;
  worker_placement& operator=(const worker_placement&) = delete;

  // The group of worker `worker`.
  [[nodiscard]] std::size_t group_of(int worker) const { return group_of_[static_cast<std::size_t>(worker)]; }
  // The GPUs the model has workers on, for required_gpu (empty: the host).
  [[nodiscard]] const std::vector<int>& gpus() const noexcept { return gpus_; }

  // The group that takes requests without CUDA inputs now (placement_policy::peek over the
  // groups' load); none while no group has an idle worker.
  [[nodiscard]] std::optional<std::size_t> group_for_unplaced() const;
  // Whether group `g` may run `r` now; `unplaced_group` is group_for_unplaced(), read once by a
  // caller that asks about many requests.
  [[nodiscard]] bool may_run(std::size_t g, const scheduled_request& r,
                             std::optional<std::size_t> unplaced_group) const;

  // Wakes one idle worker of every group that `queue` holds something for. Called whenever a
  // group's work may have changed: a request arrived, or a worker took a batch (what is left,
  // and which group takes unplaced requests, changed). A worker that finishes a batch needs no
  // call: that only makes its own group likelier to take work, and it looks at the queue itself
  // next.
  void offer(const request_queue& queue);
  // Worker of group `g` sleeps, releasing `lock`, until offered work, woken, or `until` passes.
  void wait(std::size_t g, std::unique_lock<std::mutex>& lock, std::optional<steady_time> until);
  // Wakes every waiting worker (the scheduler stops).
  void wake_all();

  // The load, as workers come up and run batches.
  void worker_waiting(std::size_t g);                        // a worker of `g` first waits for work
  void batch_started(std::size_t g, std::size_t requests);   // it took a batch of `requests`
  void batch_run(std::size_t g);                             // its run is over (not yet answered)
  void batch_answered(std::size_t g, std::size_t requests);  // and its requests are answered
  // Workers of group `g` asleep in wait(), ready to take a batch now (not one forming a batch, nor
  // one still answering its last batch's requests).
  [[nodiscard]] std::size_t waiting_workers(std::size_t g) const { return waiting_[g]; }
  // Whether no group has a batch that is not yet answered.
  [[nodiscard]] bool none_running() const;
  // Requests being run now, per device the workers run on (none: the host), in group order.
  [[nodiscard]] std::vector<std::pair<std::optional<int>, std::size_t>> running() const;

 private:
  std::vector<int> gpus_;
  // Per group, by index: its device, its load, the condition variable its idle workers wait on
  // (a deque: they cannot move), and the requests of the batches its workers run.
  std::vector<std::optional<int>> group_devices_;
  std::vector<replica_load> loads_;
  std::deque<std::condition_variable> wake_;
  std::vector<std::size_t> running_;
  std::vector<std::size_t> waiting_;   // per group: workers asleep in wait()
  std::vector<std::size_t> group_of_;  // per worker
  placement_policy placement_;         // the spreading rule and its turn for ties
};

}  // namespace ferry::serve
