#include "serve/shm/shm_guarded_copy.hpp"

#include <atomic>
#include <cerrno>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <mutex>
#include <string>

#include "ferry/core/error.hpp"
#include "ferry/memory/streaming_copy.hpp"

namespace ferry::serve {
namespace {

// The copy running on this thread, while it runs: where the client's bytes are, and where to jump
// back to when they fault.
struct copy_guard {
  const std::byte* client_begin;
  const std::byte* client_end;
  sigjmp_buf resume;
};

constinit thread_local copy_guard* active_guard = nullptr;

struct sigaction previous_action {};

void forward_to_previous(int signal, siginfo_t* info, void* context) {
  if ((previous_action.sa_flags & SA_SIGINFO) != 0 && previous_action.sa_sigaction != nullptr) {
    previous_action.sa_sigaction(signal, info, context);
    return;
  }
  if (previous_action.sa_handler != SIG_DFL && previous_action.sa_handler != SIG_IGN) {
    previous_action.sa_handler(signal);
    return;
  }
  // The default action (an ignored SIGBUS from a fault is the default too: the kernel forces it).
  // Returning re-runs the faulting instruction, which faults again, now with the default action.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(SIGBUS, &default_action, nullptr);
}

void on_sigbus(int signal, siginfo_t* info, void* context) {
  copy_guard* guard = active_guard;
  const auto* address = static_cast<const std::byte*>(info->si_addr);
  if (guard != nullptr && address >= guard->client_begin && address < guard->client_end) siglongjmp(guard->resume, 1);
  forward_to_previous(signal, info, context);
}

void install_handler() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    // SA_NODEFER: SIGBUS stays unblocked after the jump out of the handler, so sigsetjmp need not
    // save the signal mask (a system call per copy) for the next fault to be caught.
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGBUS, &action, &previous_action) != 0)
      throw error(std::string("cannot install the SIGBUS handler for shared-memory copies: ") + std::strerror(errno));
  });
}

bool guarded_copy(std::span<std::byte> destination, std::span<const std::byte> source,
                  std::span<const std::byte> client, copy_method method) {
  if (destination.size() != source.size())
    throw invalid_argument("shared-memory copy: destination has " + std::to_string(destination.size()) +
                           " bytes, source " + std::to_string(source.size()));
  if (source.empty()) return true;
  install_handler();
  copy_guard guard{client.data(), client.data() + client.size(), {}};
  if (sigsetjmp(guard.resume, 0) != 0) {
    active_guard = nullptr;
    return false;
  }
  active_guard = &guard;
  std::atomic_signal_fence(std::memory_order_seq_cst);  // armed before the first byte is touched
  if (method == copy_method::streaming)
    copy_streaming(destination, source);
  else
    std::memcpy(destination.data(), source.data(), source.size());
  std::atomic_signal_fence(std::memory_order_seq_cst);  // disarmed only after the last one
  active_guard = nullptr;
  return true;
}

}  // namespace

bool copy_from_client_memory(std::span<std::byte> destination, std::span<const std::byte> source, copy_method method) {
  return guarded_copy(destination, source, source, method);
}

bool copy_to_client_memory(std::span<std::byte> destination, std::span<const std::byte> source) {
  return guarded_copy(destination, source, destination, copy_method::ordinary);
}

}  // namespace ferry::serve
