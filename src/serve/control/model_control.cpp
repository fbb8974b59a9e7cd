#include "serve/control/model_control.hpp"

#include <algorithm>
#include <atomic>

#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve {

namespace {

// The error a call is answered with, made in a statement of its own: request_error's message is
// libstdc++'s reference-counted string, shared by every copy, so the temporary copy that
// make_exception_ptr is given must be gone before the answer reaches the caller's thread, or its
// destruction here races the caller's reading of the message.
std::exception_ptr error_for(error_status status, const std::string& message) {
  return std::make_exception_ptr(request_error(status, message));
}

}  // namespace

struct model_control::call {
  std::string what;
  std::function<void()> work;
  std::function<void(std::exception_ptr)> done;
  std::chrono::steady_clock::time_point deadline;
  std::atomic<bool> answered{false};
  bool started = false;  // under the mutex
};

model_control::model_control(std::chrono::milliseconds timeout, std::size_t max_waiting)
    : timeout_(timeout), max_waiting_(max_waiting) {
  runner_ = std::thread([this] { run(); });
  watcher_ = std::thread([this] { watch(); });
}

void model_control::stop() {
  std::deque<std::shared_ptr<call>> left;
  {
    const std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    left.swap(waiting_);
  }
  work_ready_.notify_all();
  deadlines_changed_.notify_all();
  for (const auto& c : left)
    settle(c, error_for(error_status::unavailable, c->what + " was not started: the server is shutting down"));
  runner_.join();
  watcher_.join();
}

void model_control::settle(const std::shared_ptr<call>& c, std::exception_ptr outcome) {
  if (c->answered.exchange(true)) return;
  // Let go of what the callback holds (a front end's reply keeps its connection, and the server
  // that would stop, waiting) as soon as it has answered, not when the call leaves the watch.
  auto done = std::move(c->done);
  done(std::move(outcome));
}

void model_control::submit(std::string what, std::function<void()> work, std::function<void(std::exception_ptr)> done) {
  auto c = std::make_shared<call>();
  c->what = std::move(what);
  c->work = std::move(work);
  c->done = std::move(done);
  c->deadline = std::chrono::steady_clock::now() + timeout_;
  {
    const std::lock_guard lock(mutex_);
    if (stopping_) throw request_error(error_status::unavailable, c->what + ": the server is shutting down");
    if (waiting_.size() >= max_waiting_)
      throw request_error(error_status::unavailable,
                          c->what + ": " + std::to_string(waiting_.size()) +
                              " model control calls wait already, the most this server queues; try again later");
    waiting_.push_back(c);
    watched_.push_back(c);
  }
  work_ready_.notify_one();
  deadlines_changed_.notify_one();
}

void model_control::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [this] { return stopping_ || !waiting_.empty(); });
    if (waiting_.empty()) return;  // stopping
    std::shared_ptr<call> c = std::move(waiting_.front());
    waiting_.pop_front();
    c->started = true;
    running_ = c;
    lock.unlock();
    std::exception_ptr outcome;
    try {
      c->work();
    } catch (...) {
      outcome = std::current_exception();
    }
    c->work = nullptr;
    settle(c, std::move(outcome));
    lock.lock();
    running_.reset();
  }
}

void model_control::watch() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    // Answered calls leave the watch; every call has the same timeout, so the oldest is due first.
    while (!watched_.empty() && watched_.front()->answered) watched_.pop_front();
    if (watched_.empty()) {
      deadlines_changed_.wait(lock);
      continue;
    }
    const std::shared_ptr<call> c = watched_.front();
    if (std::chrono::steady_clock::now() < c->deadline) {
      deadlines_changed_.wait_until(lock, c->deadline);
      continue;
    }
    watched_.pop_front();
    const auto seconds =
        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(timeout_).count()) + " ms";
    std::string message;
    if (c->started) {
      message = c->what + " did not finish within " + seconds +
                "; it goes on, and the repository index shows the model LOADING or UNLOADING until it ends";
    } else {
      waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), c), waiting_.end());
      message = c->what + " was not started within " + seconds + ": " +
                (running_ ? running_->what + " still runs" : std::string("other calls ran before it")) +
                "; it is dropped, try again later";
    }
    lock.unlock();
    settle(c, error_for(error_status::timed_out, message));
    lock.lock();
  }
}

}  // namespace ferry::serve
