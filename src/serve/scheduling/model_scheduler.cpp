#include "serve/scheduling/model_scheduler.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <iterator>

#include "ferry/device_fault.hpp"
#include "ferry/error.hpp"
#include "ferry/index_check.hpp"
#include "serve/device_fault_report.hpp"
#include "serve/request_error.hpp"

namespace ferry::serve {
namespace {

std::uint64_t ns_between(steady_time a, steady_time b) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

}  // namespace

struct model_scheduler::job {
  submission work;
  std::optional<int> gpu;  // set: only this GPU's workers may run it (its CUDA inputs are there)
  infer_response response;
  std::exception_ptr failure;  // set: the run failed, answer with this instead
  infer_callback done;
  steady_time arrived;
  steady_time started;
  std::optional<deadline_table::iterator> deadline;  // its entry while queued with a deadline
};

model_scheduler::model_scheduler(std::string model, std::string version, std::shared_ptr<executor> exec,
                                 model_signature signature, batching_rules rules, model_statistics& stats,
                                 std::size_t max_queue_size)
    : model_(std::move(model)),
      version_(std::move(version)),
      exec_(std::move(exec)),
      signature_(std::move(signature)),
      rules_(rules),
      stats_(stats),
      max_queue_size_(max_queue_size),
      up_(exec_->workers()) {
  const int n = exec_->workers();
  for (int i = 0; i < n; ++i) {
    const std::optional<int> device = exec_->worker_device(i);
    auto found = std::find(group_devices_.begin(), group_devices_.end(), device);
    if (found == group_devices_.end()) {
      group_devices_.push_back(device);
      loads_.push_back({.device = device.value_or(-1), .busy = 0, .total = 0});
      running_.push_back(0);
      wake_.emplace_back();
      if (device) gpus_.push_back(*device);
      found = std::prev(group_devices_.end());
    }
    group_of_.push_back(static_cast<std::size_t>(found - group_devices_.begin()));
    // Busy until its thread first waits for work.
    ++loads_[group_of_.back()].total;
    ++loads_[group_of_.back()].busy;
  }
  for (int i = 0; i < n; ++i) workers_.emplace_back([this, i] { work(i); });
  deadline_thread_ = std::thread([this] { expire(); });
  up_.wait();
}

model_scheduler::~model_scheduler() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& w : wake_) w.notify_all();
    deadline_changed_.notify_all();
  }
  for (auto& t : workers_)
    if (t.joinable()) t.join();
  if (deadline_thread_.joinable()) deadline_thread_.join();
  std::deque<std::unique_ptr<job>> left;
  left.swap(queue_);
  deadlines_.clear();
  for (auto& j : left) {
    auto why =
        std::make_exception_ptr(request_error(error_status::unavailable, "model '" + model_ + "' is shutting down"));
    fail(std::move(j), std::move(why));
  }
}

void model_scheduler::submit(submission work, infer_callback done) {
  auto j = std::make_unique<job>();
  // Refused now, not queued: no worker would ever take it.
  j->gpu = required_gpu(work.request, gpus_, model_);
  j->work = std::move(work);
  j->done = std::move(done);
  j->arrived = std::chrono::steady_clock::now();
  std::optional<steady_time> deadline;
  // A timeout so long that the deadline would overflow the clock is no deadline.
  if (j->work.timeout &&
      j->work.timeout->count() <
          std::chrono::duration_cast<std::chrono::microseconds>(steady_time::max() - j->arrived).count())
    deadline = j->arrived + *j->work.timeout;
  std::unique_lock lock(mutex_);
  if (unloading_) throw request_error(error_status::unavailable, "model '" + model_ + "' is being unloaded");
  if (stopping_) throw request_error(error_status::unavailable, "model '" + model_ + "' is shutting down");
  if (max_queue_size_ > 0 && queue_.size() >= max_queue_size_) {
    const std::size_t waiting = queue_.size();
    lock.unlock();
    stats_.record_failure(0, failure_reason::rejected);
    throw request_error(error_status::unavailable,
                        "model '" + model_ + "' is busy: " + std::to_string(waiting) +
                            " requests wait for a worker, its max_queue_size; try again later");
  }
  if (deadline) {
    j->deadline = deadlines_.emplace(*deadline, j.get());
    // Only a deadline before the deadline thread next looks needs it awake sooner. With one
    // timeout for every request, each new deadline is later than the one it sleeps until, so
    // requests do not wake it one by one.
    if (*deadline < deadline_wake_) deadline_changed_.notify_one();
  }
  queue_.push_back(std::move(j));
  offer_work();
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
  while (!stopping_) {
    if (deadlines_.empty()) {
      deadline_wake_ = steady_time::max();
      deadline_changed_.wait(lock);
      continue;
    }
    const steady_time first = deadlines_.begin()->first;
    if (std::chrono::steady_clock::now() < first) {
      deadline_wake_ = first;
      deadline_changed_.wait_until(lock, first);
      continue;
    }
    std::vector<std::unique_ptr<job>> late;
    const auto now = std::chrono::steady_clock::now();
    while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
      job* const j = deadlines_.begin()->second;
      deadlines_.erase(deadlines_.begin());
      const auto it = std::find_if(queue_.begin(), queue_.end(), [j](const auto& q) { return q.get() == j; });
      late.push_back(std::move(*it));
      queue_.erase(it);
    }
    // Outside the lock: dropping a request may unmap its shared-memory regions, and its callback
    // hands the answer to its front end.
    lock.unlock();
    const auto ms = [](auto d) {
      return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
    };
    for (auto& j : late) {
      stats_.record_failure(ns_between(j->arrived, now), failure_reason::rejected);
      const auto waited = now - j->arrived;
      const auto timeout = *j->work.timeout;
      auto why = std::make_exception_ptr(request_error(
          error_status::timed_out, "model '" + model_ + "': the request timed out: no worker started it within its " +
                                       "timeout of " + ms(timeout) + " ms (it waited " + ms(waited) +
                                       " ms in the queue)"));
      fail(std::move(j), std::move(why));
    }
    lock.lock();
    if (unloading_) idle_.notify_all();  // the queue may be empty now
  }
}

std::size_t model_scheduler::pending() const {
  const std::lock_guard lock(mutex_);
  return queue_.size();
}

std::vector<std::pair<std::optional<int>, std::size_t>> model_scheduler::running() const {
  const std::lock_guard lock(mutex_);
  std::vector<std::pair<std::optional<int>, std::size_t>> list;
  for (std::size_t g = 0; g < group_devices_.size(); ++g) list.emplace_back(group_devices_[g], running_[g]);
  return list;
}

void model_scheduler::stop() {
  std::unique_lock lock(mutex_);
  if (stopped_) return;
  unloading_ = true;
  // Every request admitted before now is answered as usual: queued ones are run (or expire at
  // their deadline), running ones finish; none is dropped or answered with another's data.
  idle_.wait(lock, [this] {
    return queue_.empty() && std::all_of(running_.begin(), running_.end(), [](std::size_t n) { return n == 0; });
  });
  stopping_ = true;
  stopped_ = true;
  for (auto& w : wake_) w.notify_all();
  deadline_changed_.notify_all();
  lock.unlock();
  for (auto& t : workers_) t.join();
  deadline_thread_.join();
  // The sessions, their buffers (pinned, registered, device) and the engines go now, not when the
  // last holder of the model lets go of it.
  exec_.reset();
}

std::optional<std::size_t> model_scheduler::group_for_unplaced() const {
  if (loads_.empty()) return std::nullopt;
  return placement_.peek(loads_);
}

bool model_scheduler::may_run(std::size_t g, const job& j, std::optional<std::size_t> unplaced_group) const {
  return j.gpu ? group_devices_[g] == j.gpu : unplaced_group == g;
}

// A group is woken whenever its work may have changed: a request arrived (submit), or a worker
// took a batch (what is left, and which group takes unplaced requests, changed). A worker that
// finishes a batch needs no wake-up call: that only makes its own group likelier to take work,
// and it looks at the queue itself next. A woken worker that finds nothing waits again without
// waking anyone, so idle workers never wake each other in a loop.
void model_scheduler::offer_work() {
  const auto unplaced = group_for_unplaced();
  for (std::size_t g = 0; g < loads_.size(); ++g) {
    if (loads_[g].busy == loads_[g].total) continue;  // no idle worker
    if (std::any_of(queue_.begin(), queue_.end(), [&](const auto& j) { return may_run(g, *j, unplaced); }))
      wake_[g].notify_one();
  }
}

std::vector<std::unique_ptr<model_scheduler::job>> model_scheduler::next_batch(std::size_t g,
                                                                               std::unique_lock<std::mutex>& lock) {
  std::vector<queued_request> view;    // what group g may run, in arrival order
  std::vector<std::size_t> positions;  // where each entry of view is in queue_
  for (;;) {
    if (stopping_) return {};
    const auto unplaced = group_for_unplaced();
    view.clear();
    positions.clear();
    for (std::size_t i = 0; i < queue_.size(); ++i)
      if (may_run(g, *queue_[i], unplaced)) {
        view.push_back({queue_[i]->work.plan.rows, queue_[i]->arrived});
        positions.push_back(i);
      }
    const batch_decision d = decide_batch(view, rules_, std::chrono::steady_clock::now());
    if (d.take > 0) {
      std::vector<std::unique_ptr<job>> batch;
      for (std::size_t k = 0; k < d.take; ++k) {
        auto& j = queue_[positions[k]];
        if (j->deadline) deadlines_.erase(*std::exchange(j->deadline, std::nullopt));  // it runs: no timeout now
        batch.push_back(std::move(j));
      }
      std::erase(queue_, nullptr);
      return batch;
    }
    if (d.wait_until)
      wake_[g].wait_until(lock, *d.wait_until);
    else
      wake_[g].wait(lock);
  }
}

void model_scheduler::work(int worker) {
  const std::size_t g = group_of_[static_cast<std::size_t>(worker)];
  std::unique_lock lock(mutex_);
  --loads_[g].busy;
  up_.count_down();
  for (;;) {
    std::vector<std::unique_ptr<job>> batch = next_batch(g, lock);
    if (batch.empty()) return;  // stopping
    ++loads_[g].busy;
    running_[g] += batch.size();
    placement_.taken(g, loads_.size());
    // Others may form the next batch from what is left while this one runs.
    offer_work();
    lock.unlock();
    const auto now = std::chrono::steady_clock::now();
    for (auto& j : batch) j->started = now;
    run(batch, worker);
    lock.lock();
    --loads_[g].busy;
    // Answered only now that the load says this batch is over: a client sending its next request
    // as soon as it has this answer finds this worker free, so placement sees the real load.
    // Outside the lock: dropping a request may unmap its shared-memory regions.
    const std::size_t answered = batch.size();
    lock.unlock();
    answer(std::move(batch));
    lock.lock();
    running_[g] -= answered;
    if (unloading_) idle_.notify_all();
  }
}

void model_scheduler::run(std::span<const std::unique_ptr<job>> jobs, int worker) {
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
    const bool caller = dynamic_cast<const ferry::invalid_argument*>(&e) != nullptr;
    // An index out of range found on the GPU (CUDA shared memory) is the request's own mistake,
    // said as the host's check says it.
    const bool index = dynamic_cast<const index_out_of_range*>(&e) != nullptr;
    j->failure = std::make_exception_ptr(
        request_error(caller ? error_status::bad_request : error_status::internal,
                      "model '" + model_ + "': " + (index ? "" : "inference failed: ") + e.what()));
  }
}

void model_scheduler::answer(std::vector<std::unique_ptr<job>> jobs) {
  for (auto& j : jobs) {
    infer_callback done = std::move(j->done);
    infer_result result{std::move(j->response), j->failure};
    j.reset();  // the request's buffers go before its answer is handed on
    done(std::move(result));
  }
}

void model_scheduler::fail(std::unique_ptr<job> j, std::exception_ptr why) {
  infer_callback done = std::move(j->done);
  j.reset();
  done(infer_result{{}, std::move(why)});
}

}  // namespace ferry::serve
