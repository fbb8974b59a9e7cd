#include "serve/admission/memory_release.hpp"

#include <cstdlib>
#include <string>

#include <dlfcn.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ferry::serve {
namespace {

// jemalloc's control call, where jemalloc is this process's malloc (linked or LD_PRELOADed):
// looked up at run time, so ferry neither links nor needs jemalloc.
using mallctl_fn = int (*)(const char*, void*, std::size_t*, void*, std::size_t);
mallctl_fn jemalloc_mallctl() {
  static const auto fn = reinterpret_cast<mallctl_fn>(dlsym(RTLD_DEFAULT, "mallctl"));
  return fn;
}

}  // namespace

bool running_on_jemalloc() { return jemalloc_mallctl() != nullptr; }

std::string allocator_description() {
  if (running_on_jemalloc()) {
    const char* conf = std::getenv("MALLOC_CONF");
    return std::string("jemalloc") + (conf != nullptr ? std::string(" (MALLOC_CONF ") + conf + ")" : "");
  }
#if defined(__GLIBC__)
  const char* arenas = std::getenv("MALLOC_ARENA_MAX");
  return std::string("glibc malloc, ") +
         (arenas != nullptr ? std::string("MALLOC_ARENA_MAX ") + arenas : std::string("one arena"));
#else
  return "the C library's malloc";
#endif
}

void release_free_memory() {
  if (const auto mallctl = jemalloc_mallctl()) {
    // Every arena's unused dirty pages, now rather than after its decay time.
    (void)mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);  // 4096: MALLCTL_ARENAS_ALL
    return;
  }
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
