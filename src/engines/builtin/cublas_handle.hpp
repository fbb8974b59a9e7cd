// An owning cuBLAS handle and the check every cuBLAS call goes through (the cuBLAS counterpart of
// FERRY_CUDA_TRY: throws a ferry error naming the call, the status and file:line; allocation
// failures become out_of_memory).
#pragma once

#include <cublas_v2.h>

namespace ferry::builtin {

[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);

#define FERRY_CUBLAS_TRY(call)                                                               \
  do {                                                                                       \
    const cublasStatus_t ferry_cublas_status_ = (call);                                      \
    if (ferry_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                       \
      ::ferry::builtin::throw_cublas_error(ferry_cublas_status_, #call, __FILE__, __LINE__); \
  } while (0)

// One handle per context: a handle carries its stream and workspace, so contexts running
// concurrently on different streams must not share one.
class cublas_handle {
 public:
  cublas_handle();
  ~cublas_handle();
  cublas_handle(const cublas_handle&) = delete;
  cublas_handle& operator=(const cublas_handle&) = delete;

  [[nodiscard]] cublasHandle_t get() const noexcept { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace ferry::builtin
