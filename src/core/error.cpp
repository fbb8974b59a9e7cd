#include "ferry/core/error.hpp"

#include <cstdio>

#include "ferry/core/device_fault.hpp"

namespace ferry {
namespace {

std::string describe(cudaError_t code, const std::string& call, const std::string& file, int line) {
  std::string text = call;
  text += " failed: ";
  text += cudaGetErrorName(code);
  text += " (";
  text += cudaGetErrorString(code);
  text += ") at ";
  text += file;
  text += ':';
  text += std::to_string(line);
  return text;
}

}  // namespace

cuda_error::cuda_error(cudaError_t code, std::string call, std::string file, int line)
    : error(describe(code, call, file, line)),
      code_(code),
      call_(std::move(call)),
      file_(std::move(file)),
      line_(line) {}

cuda_error::cuda_error(cudaError_t code, const std::string& message) : error(message), code_(code), line_(0) {}

namespace detail {

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  if (is_sticky(code)) raise_device_fault(code, describe(code, call, file, line));
  // Non-sticky errors stay in the runtime's "last error" slot; clear it so the next, unrelated
  // FERRY_CUDA_CHECK_LAUNCH does not report this one again.
  (void)cudaGetLastError();
  if (code == cudaErrorMemoryAllocation) throw out_of_memory(code, call, file, line);
  throw cuda_error(code, call, file, line);
}

void log_cuda_error(cudaError_t code, const char* call, const char* file, int line) noexcept {
  if (is_sticky(code)) {
    // Noted, and said once by whoever handles the fault: the cleanup that follows calls no CUDA.
    try {
      note_device_fault({.ordinal = current_ordinal(), .code = code, .what = describe(code, call, file, line)});
    } catch (...) {  // no memory for the text
      note_device_fault({.ordinal = current_ordinal(), .code = code, .what = {}});
    }
    return;
  }
  (void)cudaGetLastError();
  std::fprintf(stderr, "ferry: %s failed: %s (%s) at %s:%d\n", call, cudaGetErrorName(code), cudaGetErrorString(code),
               file, line);
}

bool cuda_cleanup_allowed() noexcept { return !device_faulted(); }

}  // namespace detail
}  // namespace ferry
