// Two pools of threads for the HTTP front end's work (decoding bodies, encoding answers), one for
// small jobs and one for large, so that a small request never waits behind large ones.
//
// With one pool, a well-behaved client's inference of a few KiB waited in line behind the 17 MB
// JSON answers of 70 connections that never read them (each encoded on the pool): up to 9 s. A
// job is small when the bytes it decodes or encodes are at most `small_job_bytes`; the small lane
// runs only such jobs, so it waits for at most a few of them, and the large lane's work takes the
// cores meanwhile only as the system shares them between threads.
#pragma once

#include <cstddef>
#include <utility>

#include "serve/transport/work_pool.hpp"

namespace ferry::serve {

class work_lanes {
 public:
  // Jobs of this many bytes or fewer go to the small lane.
  static constexpr std::size_t small_job_bytes = std::size_t{64} << 10;

  // `threads` in each lane.
  explicit work_lanes(std::size_t threads) : small_(threads), large_(threads) {}

  // Runs `task`, which decodes or encodes about `bytes`, on the lane of its size; from any thread.
  template <class Task>
  void post(std::size_t bytes, Task&& task) {
    (bytes <= small_job_bytes ? small_ : large_).post(std::forward<Task>(task));
  }

  // Returns once every task posted has run (work_pool::join). Idempotent.
  void join() {
    small_.join();
    large_.join();
  }

 private:
  work_pool small_;
  work_pool large_;
};

}  // namespace ferry::serve
