// One model's request queue and the workers that drain it (DESIGN.md §4 slots, seen from the
// server): each worker forms a batch with decide_batch, runs it on the executor and answers every
// request in it from its own rows. Workers run batches concurrently, so a slow batch holds one
// worker, not the queue; a batch whose run fails is retried request by request, so only the
// request that fails gets the error.
#pragma once

#include <condition_variable>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "serve/batching_policy.hpp"
#include "serve/executor.hpp"
#include "serve/model_statistics.hpp"

namespace ferry::serve {

// What a queued request needs besides itself: where its shared-memory outputs go.
struct submission {
  infer_request request;
  request_plan plan;
  std::vector<output_destination> output_destinations;  // see batch_item
  // Keeps the shared-memory regions the request reads or writes mapped until it is answered,
  // even when a client unregisters them meanwhile.
  std::vector<std::shared_ptr<const void>> pinned_regions;
};

class model_scheduler {
 public:
  model_scheduler(std::string model, std::string version, std::shared_ptr<executor> exec,
                  model_signature signature, batching_rules rules, model_statistics& stats);
  // Stops the workers after their current batch; requests still queued fail as unavailable.
  ~model_scheduler();
  model_scheduler(const model_scheduler&) = delete;
  model_scheduler& operator=(const model_scheduler&) = delete;

  // Queues a checked request (plan_request). The future holds the response, or a request_error.
  [[nodiscard]] std::future<infer_response> submit(submission work);
  // Requests waiting for a worker.
  [[nodiscard]] std::size_t pending() const;

 private:
  struct job;
  void work(int worker);
  void run(std::vector<std::unique_ptr<job>>& jobs, int worker);

  std::string model_, version_;
  std::shared_ptr<executor> exec_;
  model_signature signature_;
  batching_rules rules_;
  model_statistics& stats_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<std::unique_ptr<job>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace ferry::serve
