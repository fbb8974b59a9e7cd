// A gate for tests of concurrent code: the threads that reach pass() wait there until the test
// opens it, so a test knows that a worker or handler is busy, and how many are.
#pragma once

#include <condition_variable>
#include <mutex>

namespace ferry::testing {

class gate {
 public:
  void pass() {
    std::unique_lock lock(mutex_);
    ++arrived_;
    changed_.notify_all();
    changed_.wait(lock, [this] { return open_; });
  }
  void wait_for_arrivals(int n) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return arrived_ >= n; });
  }
  void open() {
    const std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int arrived_ = 0;
  bool open_ = false;
};

}  // namespace ferry::testing
