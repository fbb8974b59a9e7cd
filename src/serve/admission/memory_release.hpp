// Gives the memory that requests used back to the system once the server is idle.
//
// During load the server keeps freed request memory for the next request (the allocator settings
// of `ferry serve`: faulting megabytes in again for every request cost a third of its CPU), so
// resident memory grows to what the busiest moment needed. Once no request has been in flight for
// `delay`, the allocator is asked to return its free memory (glibc: malloc_trim, which also
// releases free pages inside its heaps; jemalloc: a purge of every arena); the next load takes it
// again. The request intake says when the last request ended (request_intake::on_idle).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace ferry::serve {

// Returns free allocator memory to the system; what the allocator this process runs on can do
// (nothing where it offers no such call).
void release_free_memory();
// Whether this process's malloc is jemalloc (linked in or preloaded).
[[nodiscard]] bool running_on_jemalloc();
// The allocator this process runs on and its setting, for the server's start lines: "jemalloc
// (MALLOC_CONF ...)", "glibc malloc, one arena", "glibc malloc, MALLOC_ARENA_MAX 8".
[[nodiscard]] std::string allocator_description();

class idle_memory_release {
 public:
  // `still_idle`: whether no request is in flight now. `release`: gives the memory back.
  idle_memory_release(std::chrono::milliseconds delay, std::function<bool()> still_idle,
                      std::function<void()> release = release_free_memory);
  ~idle_memory_release();
  idle_memory_release(const idle_memory_release&) = delete;
  idle_memory_release& operator=(const idle_memory_release&) = delete;

  // The requests in flight dropped to none: release once that has lasted `delay`. Cheap, never
  // blocks; callable from any thread.
  void became_idle();
  // How many times the memory was released.
  [[nodiscard]] std::uint64_t releases() const;

 private:
  void run();

  const std::chrono::milliseconds delay_;
  const std::function<bool()> still_idle_;
  const std::function<void()> release_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool pending_ = false;
  bool delaying_ = false;  // the thread waits out the delay (not for pending_)
  bool stopping_ = false;
  std::uint64_t releases_ = 0;
  std::thread thread_;  // last: started once the rest is set
};

}  // namespace ferry::serve
