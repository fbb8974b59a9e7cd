#include "serve/model_scheduler.hpp"

#include <chrono>

#include "ferry/error.hpp"
#include "serve/request_error.hpp"

namespace ferry::serve {
namespace {

std::uint64_t ns_between(steady_time a, steady_time b) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

}  // namespace

struct model_scheduler::job {
  submission work;
  infer_response response;
  std::promise<infer_response> promise;
  steady_time arrived;
  steady_time started;
};

model_scheduler::model_scheduler(std::string model, std::string version, std::shared_ptr<executor> exec,
                                 model_signature signature, batching_rules rules, model_statistics& stats)
    : model_(std::move(model)),
      version_(std::move(version)),
      exec_(std::move(exec)),
      signature_(std::move(signature)),
      rules_(rules),
      stats_(stats) {
  const int n = exec_->workers();
  for (int i = 0; i < n; ++i) workers_.emplace_back([this, i] { work(i); });
}

model_scheduler::~model_scheduler() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  arrived_.notify_all();
  for (auto& t : workers_) t.join();
  for (auto& j : queue_)
    j->promise.set_exception(std::make_exception_ptr(
        request_error(error_status::unavailable, "model '" + model_ + "' is shutting down")));
}

std::future<infer_response> model_scheduler::submit(submission work) {
  auto j = std::make_unique<job>();
  j->work = std::move(work);
  j->arrived = std::chrono::steady_clock::now();
  auto future = j->promise.get_future();
  {
    const std::lock_guard lock(mutex_);
    if (stopping_) throw request_error(error_status::unavailable, "model '" + model_ + "' is shutting down");
    queue_.push_back(std::move(j));
  }
  arrived_.notify_one();
  return future;
}

std::size_t model_scheduler::pending() const {
  const std::lock_guard lock(mutex_);
  return queue_.size();
}

void model_scheduler::work(int worker) {
  std::vector<queued_request> view;
  for (;;) {
    std::vector<std::unique_ptr<job>> batch;
    {
      std::unique_lock lock(mutex_);
      for (;;) {
        if (stopping_) return;
        view.clear();
        for (const auto& j : queue_) view.push_back({j->work.plan.rows, j->arrived});
        const batch_decision d = decide_batch(view, rules_, std::chrono::steady_clock::now());
        if (d.take > 0) {
          for (std::size_t i = 0; i < d.take; ++i) {
            batch.push_back(std::move(queue_.front()));
            queue_.pop_front();
          }
          break;
        }
        if (d.wait_until)
          arrived_.wait_until(lock, *d.wait_until);
        else
          arrived_.wait(lock);
      }
      // Others may form the next batch from what is left while this one runs.
      if (!queue_.empty()) arrived_.notify_one();
    }
    const auto now = std::chrono::steady_clock::now();
    for (auto& j : batch) j->started = now;
    run(batch, worker);
  }
}

void model_scheduler::run(std::vector<std::unique_ptr<job>>& jobs, int worker) {
  std::vector<batch_item> items;
  std::int64_t rows = 0;
  for (auto& j : jobs) {
    j->response = infer_response{model_, version_, j->work.request.id, {}};
    items.push_back({&j->work.request, &j->work.plan, &j->response, j->work.output_destinations});
    rows += j->work.plan.rows;
  }
  try {
    const batch_timing timing = exec_->execute(items, worker);
    stats_.record_execution(rows, jobs.size(), timing);
    const auto done = std::chrono::steady_clock::now();
    for (auto& j : jobs) {
      stats_.record_success(j->work.plan.rows, ns_between(j->arrived, j->started), ns_between(j->arrived, done));
      j->promise.set_value(std::move(j->response));
    }
  } catch (const std::exception& e) {
    if (jobs.size() > 1) {
      // One bad request must not fail its batch-mates: run each alone, so only it fails.
      for (auto& j : jobs) {
        std::vector<std::unique_ptr<job>> alone;
        alone.push_back(std::move(j));
        run(alone, worker);
      }
      return;
    }
    const auto done = std::chrono::steady_clock::now();
    auto& j = jobs.front();
    stats_.record_failure(ns_between(j->arrived, done));
    const bool caller = dynamic_cast<const ferry::invalid_argument*>(&e) != nullptr;
    j->promise.set_exception(std::make_exception_ptr(
        request_error(caller ? error_status::bad_request : error_status::internal,
                      "model '" + model_ + "': inference failed: " + e.what())));
  }
}

}  // namespace ferry::serve
