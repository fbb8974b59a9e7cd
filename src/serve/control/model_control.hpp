// Where model control calls (load, unload) run: a thread of their own, one call at a time, so a
// load building a model or an unload waiting for its model's requests never holds a thread that
// requests need (the front ends' pools decode and answer every model's requests). Bounded twice:
// at most `max_waiting` calls wait for the thread (one more is refused at once, unavailable), and
// a caller waits at most `timeout` for its call's outcome. Past it the caller is answered
// timed_out, saying what goes on: a call that started still finishes (the repository index shows
// the model LOADING or UNLOADING meanwhile), one still waiting is dropped and never runs.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace ferry::serve {

class model_control {
 public:
  model_control(std::chrono::milliseconds timeout, std::size_t max_waiting = 16);
  ~model_control() { stop(); }
  model_control(const model_control&) = delete;
  model_control& operator=(const model_control&) = delete;

  // Runs `work` on the control thread after the calls before it. `done` gets its outcome (null:
  // done; else the exception it threw, or a request_error timed_out when `timeout` passed first),
  // exactly once, on the control thread or the watch thread: it must not block. `what` names the
  // call in messages ("unload of model 'x'"). Throws request_error(unavailable), calling nothing,
  // when max_waiting calls wait already.
  void submit(std::string what, std::function<void()> work, std::function<void(std::exception_ptr)> done);

  // Answers the calls still waiting (unavailable, shutting down), lets the one running end, and
  // joins the threads; later calls are refused. Idempotent.
  void stop();

 private:
  struct call;
  void run();
  void watch();
  // Gives `c` its outcome, unless it has one (under no lock).
  static void settle(const std::shared_ptr<call>& c, std::exception_ptr outcome);

  const std::chrono::milliseconds timeout_;
  const std::size_t max_waiting_;
  std::mutex mutex_;
  std::condition_variable work_ready_, deadlines_changed_;
  std::deque<std::shared_ptr<call>> waiting_;
  std::deque<std::shared_ptr<call>> watched_;  // every call not yet answered, oldest (soonest deadline) first
  std::shared_ptr<call> running_;
  bool stopping_ = false;
  std::thread runner_, watcher_;
};

}  // namespace ferry::serve
