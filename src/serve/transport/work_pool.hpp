// A fixed pool of threads that other threads hand work to: the front ends decode requests and
// encode answers on one, and models' callbacks hand their answers to it.
//
// Unlike a bare asio::thread_pool, it may be destroyed as soon as its last task has run. Asio
// signals the pool's threads after a task is queued, so a task posted from outside the pool (a
// model's worker) can run and end before post() returns: destroying the pool then would race
// with that signal. Posts in progress are counted, and join() waits for them too.
#pragma once

#include <atomic>
#include <cstddef>
#include <thread>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

namespace ferry::serve {

class work_pool {
 public:
  explicit work_pool(std::size_t threads) : pool_(threads) {}
  ~work_pool() { join(); }
  work_pool(const work_pool&) = delete;
  work_pool& operator=(const work_pool&) = delete;

  // Runs `task` on a thread of the pool; from any thread.
  template <class Task>
  void post(Task&& task) {
    posting_.fetch_add(1, std::memory_order_relaxed);
    boost::asio::post(pool_, std::forward<Task>(task));
    posting_.fetch_sub(1, std::memory_order_release);
  }

  // Returns once every task posted has run and every post() has returned. Idempotent.
  void join() {
    pool_.join();
    while (posting_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  }

 private:
  std::atomic<int> posting_{0};
  boost::asio::thread_pool pool_;
};

}  // namespace ferry::serve
