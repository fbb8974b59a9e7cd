#include "serve/scheduling/model_scheduler.hpp"

#include <chrono>
#include <exception>
#include <new>

#include "ferry/core/device_fault.hpp"
#include "ferry/core/error.hpp"
#include "ferry/session/index_check.hpp"
#include "serve/observability/allocation_failures.hpp"
#include "serve/observability/request_failure.hpp"
#include "serve/scheduling/request_placement.hpp"
#include "serve/vocabulary/device_fault_report.hpp"
#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve {
namespace {

std::uint64_t ns_between(steady_time a, steady_time b) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

template <class Duration>
std::string ms(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

}  // namespace

model_scheduler::model_scheduler(std::string model, std::string version, std::shared_ptr<executor> exec,
                                 model_signature signature, batching_rules rules, model_statistics& stats,
                                 std::size_t max_queue_size)
    : model_(std::move(model)),
      version_(std::move(version)),
      exec_(std::move(exec)),
      signature_(std::move(signature)),
      stats_(stats),
      queue_(max_queue_size),
      batcher_(rules),
      placement_(*exec_),
      up_(exec_->workers()) {
  const int n = exec_->workers();
  for (int i = 0; i < n; ++i) workers_.emplace_back([this, i] { work(i); });
  deadline_thread_ = std::thread([this] { expire(); });
  up_.wait();
}

model_scheduler::~model_scheduler() {
  {
    const std::lock_guard lock(mutex_);
    lifecycle_.shut_down();
    placement_.wake_all();
    deadline_changed_.notify_all();
  }
  for (auto& t : workers_)
    if (t.joinable()) t.join();
  if (deadline_thread_.joinable()) deadline_thread_.join();
  // Every thread is gone: nothing else touches the queue now.
  for (auto& r : queue_.take_all()) {
    auto why =
        std::make_exception_ptr(request_error(error_status::unavailable, "model '" + model_ + "' is shutting down"));
    fail(std::move(r), std::move(why));
  }
}

void model_scheduler::submit(submission work, infer_callback done) {
  auto r = std::make_unique<scheduled_request>();
  // Refused now, not queued: no worker would ever take it.
  r->gpu = required_gpu(work.request, placement_.gpus(), model_);
  r->work = std::move(work);
  r->done = std::move(done);
  r->arrived = std::chrono::steady_clock::now();
  const std::optional<steady_time> deadline = deadline_after(r->arrived, r->work.timeout);
  std::unique_lock lock(mutex_);
  if (const auto refused = lifecycle_.refusal(model_)) throw request_error(error_status::unavailable, *refused);
  if (queue_.full()) {
    const std::size_t waiting = queue_.size();
    lock.unlock();
    stats_.record_failure(0, failure_reason::rejected);
    throw request_error(error_status::unavailable,
                        "model '" + model_ + "' is busy: " + std::to_string(waiting) +
                            " requests wait for a worker, its max_queue_size; try again later");
  }
  if (queue_.push(std::move(r), deadline)) deadline_changed_.notify_one();
  placement_.offer(queue_);
}

pending_response model_scheduler::submit(submission work) {
  auto promise = std::make_shared<std::promise<infer_response>>();
  pending_response answer(promise);
  submit(std::move(work), [promise](infer_result result) {
    if (result.failure)
      promise->set_exception(result.failure);
    else
      promise->set_value(std::move(result.response));
  });
  return answer;
}

void model_scheduler::expire() {
  std::unique_lock lock(mutex_);
  while (lifecycle_.threads_run()) {
    const std::optional<steady_time> first = queue_.first_deadline();
    if (!first) {
      queue_.deadline_thread_sleeps_until(steady_time::max());
      deadline_changed_.wait(lock);
      continue;
    }
    if (std::chrono::steady_clock::now() < *first) {
      queue_.deadline_thread_sleeps_until(*first);
      deadline_changed_.wait_until(lock, *first);
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    batch late = queue_.withdraw_expired(now);
    // Outside the lock: dropping a request may unmap its shared-memory regions, and its callback
    // hands the answer to its front end.
    lock.unlock();
    for (auto& r : late) {
      stats_.record_failure(ns_between(r->arrived, now), failure_reason::rejected);
      const auto waited = now - r->arrived;
      const auto timeout = *r->work.timeout;
      auto why = std::make_exception_ptr(request_error(
          error_status::timed_out, "model '" + model_ + "': the request timed out: no worker started it within its " +
                                       "timeout of " + ms(timeout) + " ms (it waited " + ms(waited) +
                                       " ms in the queue)"));
      fail(std::move(r), std::move(why));
    }
    lock.lock();
    if (lifecycle_.stop_began()) idle_.notify_all();  // the queue may be empty now
  }
}

std::size_t model_scheduler::pending() const {
  const std::lock_guard lock(mutex_);
  return queue_.size();
}

std::vector<std::pair<std::optional<int>, std::size_t>> model_scheduler::running() const {
  const std::lock_guard lock(mutex_);
  return placement_.running();
}

scheduler_state model_scheduler::state() const {
  const std::lock_guard lock(mutex_);
  return lifecycle_.state();
}

void model_scheduler::stop() {
  std::unique_lock lock(mutex_);
  if (!lifecycle_.begin_drain()) return;
  // Every request admitted before now is answered as usual: queued ones are run (or expire at
  // their deadline), running ones finish; none is dropped or answered with another's data.
  idle_.wait(lock, [this] { return queue_.empty() && placement_.none_running(); });
  if (!lifecycle_.finish_drain()) return;  // another stop() call got here first and joins
  placement_.wake_all();
  deadline_changed_.notify_all();
  lock.unlock();
  for (auto& t : workers_) t.join();
  deadline_thread_.join();
  // The sessions, their buffers (pinned, registered, device) and the engines go now, not when the
  // last holder of the model lets go of it.
  exec_.reset();
}

model_scheduler::batch model_scheduler::next_batch(std::size_t g, std::unique_lock<std::mutex>& lock) {
  for (;;) {
    if (!lifecycle_.threads_run()) return {};
    const auto unplaced = placement_.group_for_unplaced();
    // Another worker asleep waiting for work means a second batch could run now, beside this one.
    const worker_view workers{.another_idle = placement_.waiting_workers(g) > 0};
    batcher::formed formed = batcher_.form(
        queue_, [&](const scheduled_request& r) { return placement_.may_run(g, r, unplaced); }, workers);
    if (!formed.batch.empty()) return std::move(formed.batch);
    placement_.wait(g, lock, formed.wait_until);
  }
}

void model_scheduler::work(int worker) {
  const std::size_t g = placement_.group_of(worker);
  std::unique_lock lock(mutex_);
  placement_.worker_waiting(g);
  up_.count_down();
  for (;;) {
    batch jobs = next_batch(g, lock);
    if (jobs.empty()) return;  // the threads stop
    placement_.batch_started(g, jobs.size());
    // Others may form the next batch from what is left while this one runs.
    placement_.offer(queue_);
    lock.unlock();
    const auto now = std::chrono::steady_clock::now();
    for (auto& r : jobs) r->started = now;
    run(jobs, worker);
    lock.lock();
    placement_.batch_run(g);
    // Answered only now that the load says this batch is over: a client sending its next request
    // as soon as it has this answer finds this worker free, so placement sees the real load.
    // Outside the lock: dropping a request may unmap its shared-memory regions.
    const std::size_t answered = jobs.size();
    lock.unlock();
    answer(std::move(jobs));
    lock.lock();
    placement_.batch_answered(g, answered);
    if (lifecycle_.stop_began()) idle_.notify_all();
  }
}

void model_scheduler::run(std::span<const std::unique_ptr<scheduled_request>> jobs, int worker) {
  std::vector<batch_item> items;
  std::int64_t rows = 0;
  for (const auto& j : jobs) {
    j->response = infer_response{model_, version_, j->work.request.id, {}};
    items.push_back({&j->work.request, &j->work.plan, &j->response, j->work.output_destinations});
    rows += j->work.plan.rows;
  }
  try {
    const batch_timing timing = exec_->execute(items, worker);
    stats_.record_execution(rows, jobs.size(), timing);
    const auto done = std::chrono::steady_clock::now();
    for (const auto& j : jobs)
      stats_.record_success(j->work.plan.rows, ns_between(j->arrived, j->started), ns_between(j->arrived, done));
  } catch (const device_fault& e) {
    // The GPU's context is lost: every run on it would fail the same way, so no job is retried
    // alone. The server turns not live and not ready and exits for a restart (server.cpp).
    report_device_fault(model_, jobs.front()->work.request.id, e.what());
    const auto done = std::chrono::steady_clock::now();
    for (const auto& j : jobs) {
      stats_.record_failure(ns_between(j->arrived, done));
      j->failure = std::make_exception_ptr(request_error(
          error_status::unavailable, "model '" + model_ + "': " + device_fault_reason(*first_device_fault())));
    }
  } catch (const std::exception& e) {
    if (jobs.size() > 1) {
      // One bad request must not fail its batch-mates: run each alone, so only it fails.
      for (const auto& j : jobs) run(std::span(&j, 1), worker);
      return;
    }
    const auto done = std::chrono::steady_clock::now();
    const auto& j = jobs.front();
    stats_.record_failure(ns_between(j->arrived, done));
    // An index out of range found on the GPU (CUDA shared memory) is the request's own mistake,
    // said as the host's check says it; memory for its run that could not be had fails it as one
    // the server has no room for (request_failure.hpp).
    const bool index = dynamic_cast<const index_out_of_range*>(&e) != nullptr;
    j->failure = std::make_exception_ptr(current_request_error(
        allocation_stage::execute, "model '" + model_ + "': " + (index ? "" : "inference failed: ")));
  }
}

void model_scheduler::answer(batch jobs) {
  for (auto& j : jobs) {
    infer_callback done = std::move(j->done);
    infer_result result{std::move(j->response), j->failure};
    j.reset();  // the request's buffers go before its answer is handed on
    done(std::move(result));
  }
}

void model_scheduler::fail(std::unique_ptr<scheduled_request> r, std::exception_ptr why) {
  infer_callback done = std::move(r->done);
  r.reset();
  done(infer_result{{}, std::move(why)});
}

}  // namespace ferry::serve
