#include "serve/memory_release.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ferry::serve {

void release_free_memory() {
#if defined(__GLIBC__)
  // Every arena, and free pages in the middle of each heap too (madvise), not only its top.
  (void)malloc_trim(0);
#endif
}

idle_memory_release::idle_memory_release(std::chrono::milliseconds delay, std::function<bool()> still_idle,
                                         std::function<void()> release)
    : delay_(delay), still_idle_(std::move(still_idle)), release_(std::move(release)), thread_([this] { run(); }) {}

idle_memory_release::~idle_memory_release() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void idle_memory_release::became_idle() {
  bool wake = false;
  {
    const std::lock_guard lock(mutex_);
    pending_ = true;
    // While the delay runs, the thread reads pending_ when it ends: waking it for each request
    // that ends under load would cost a context switch per request.
    wake = !delaying_;
  }
  if (wake) wake_.notify_all();
}

std::uint64_t idle_memory_release::releases() const {
  const std::lock_guard lock(mutex_);
  return releases_;
}

void idle_memory_release::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return pending_ || stopping_; });
    // Idle since now: wait out the delay. Becoming idle again meanwhile (a request came and went)
    // starts the delay over, so a steady trickle of requests never triggers a release.
    delaying_ = true;
    do {
      pending_ = false;
      if (wake_.wait_for(lock, delay_, [this] { return stopping_; })) return;
    } while (pending_);
    delaying_ = false;
    lock.unlock();
    const bool idle = still_idle_();
    if (idle) release_();
    lock.lock();
    if (idle) ++releases_;
  }
}

}  // namespace ferry::serve
