// Typed errors and the one CUDA-checking entry point of ferry.
//
// Every CUDA runtime call in ferry goes through FERRY_CUDA_TRY, which throws a cuda_error that
// carries the call's text, the CUDA error name and string, and file:line. Out-of-memory gets its
// own type so callers can react (shrink a batch, refuse a strategy) without parsing strings, and
// so does a sticky error that lost the GPU's context (device_fault; ferry/core/device_fault.hpp).
// Destructors must never throw: they use FERRY_CUDA_TRY_NOTHROW, which logs to stderr instead,
// and makes no call at all once the context is lost.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace ferry {

// Base of every error ferry throws on purpose; the CLI prints what() as one line.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input from the caller: an unknown name, a wrong size, an out-of-range option.
class invalid_argument : public error {
 public:
  using error::error;
};

// The platform cannot do what was asked (a strategy it lacks, memory it cannot register).
// Raised instead of silently falling back to something slower.
class unsupported : public error {
 public:
  using error::error;
};

// No usable CUDA device (no driver, no GPU, or the driver is older than the runtime).
class no_device : public error {
 public:
  using error::error;
};

// A CUDA runtime call failed.
class cuda_error : public error {
 public:
  cuda_error(cudaError_t code, std::string call, std::string file, int line);
  // A failure that other code (a backend plugin) reports as a sentence rather than as a call of ours.
  cuda_error(cudaError_t code, const std::string& message);

  [[nodiscard]] cudaError_t code() const noexcept { return code_; }
  [[nodiscard]] const std::string& call() const noexcept { return call_; }
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  [[nodiscard]] int line() const noexcept { return line_; }

 private:
  cudaError_t code_;
  std::string call_;
  std::string file_;
  int line_;
};

// A CUDA allocation failed for lack of memory (device, pinned or managed).
class out_of_memory : public cuda_error {
 public:
  using cuda_error::cuda_error;
};

// A sticky CUDA error (ferry/core/device_fault.hpp): the GPU's context is lost for the rest of the
// process. Noted once, process-wide, when it is raised; nothing can recover but a restart.
class device_fault : public cuda_error {
 public:
  using cuda_error::cuda_error;
};

namespace detail {
// Throws the right cuda_error subtype when code is not cudaSuccess. Clears the sticky
// "last error" so a handled failure does not surface again at the next unrelated call.
void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line);
// Logs a failed call to stderr; used where throwing is not allowed (destructors).
void log_cuda_error(cudaError_t code, const char* call, const char* file, int line) noexcept;
// Whether cleanup should still call CUDA: false once a device fault was noted.
[[nodiscard]] bool cuda_cleanup_allowed() noexcept;
}  // namespace detail

}  // namespace ferry

#define FERRY_CUDA_TRY(call)                                                                                       \
  do {                                                                                                             \
    const cudaError_t ferry_status_ = (call);                                                                      \
    if (ferry_status_ != cudaSuccess) ::ferry::detail::throw_cuda_error(ferry_status_, #call, __FILE__, __LINE__); \
  } while (0)

// Skips the call once the context is lost: every call would fail the same way, and a destructor
// has nothing to release in a context that is gone.
#define FERRY_CUDA_TRY_NOTHROW(call)                                                                             \
  do {                                                                                                           \
    if (!::ferry::detail::cuda_cleanup_allowed()) break;                                                         \
    const cudaError_t ferry_status_ = (call);                                                                    \
    if (ferry_status_ != cudaSuccess) ::ferry::detail::log_cuda_error(ferry_status_, #call, __FILE__, __LINE__); \
  } while (0)

// Checks the launch of the kernel that was just enqueued (invalid configuration and the like).
#define FERRY_CUDA_CHECK_LAUNCH() FERRY_CUDA_TRY(cudaPeekAtLastError())
