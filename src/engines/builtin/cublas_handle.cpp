#include "engines/builtin/cublas_handle.hpp"

#include <cstdio>
#include <string>

#include "ferry/core/error.hpp"

namespace ferry::builtin {

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_ALLOC_FAILED)
    throw out_of_memory(cudaErrorMemoryAllocation, std::string(call) + " (" + cublasGetStatusName(status) + ")", file,
                        line);
  throw error(std::string(call) + " failed: " + cublasGetStatusName(status) + " (" + cublasGetStatusString(status) +
              ") at " + file + ":" + std::to_string(line));
}

cublas_handle::cublas_handle() { FERRY_CUBLAS_TRY(cublasCreate(&handle_)); }

cublas_handle::~cublas_handle() {
  if (handle_ == nullptr) return;
  const cublasStatus_t status = cublasDestroy(handle_);
  if (status != CUBLAS_STATUS_SUCCESS)
    std::fprintf(stderr, "ferry: cublasDestroy failed: %s\n", cublasGetStatusName(status));
}

}  // namespace ferry::builtin
