#include "core/scoped_device.hpp"

#include <cuda_runtime_api.h>

#include "ferry/core/error.hpp"

namespace ferry::core {

scoped_device::scoped_device(int ordinal) {
  FERRY_CUDA_TRY(cudaGetDevice(&previous_));
  if (previous_ != ordinal) FERRY_CUDA_TRY(cudaSetDevice(ordinal));
}

scoped_device::~scoped_device() {
  int current = -1;
  // cudaGetDevice only reads the thread's state; the set is skipped when nothing changed.
  if (cudaGetDevice(&current) != cudaSuccess || current != previous_) FERRY_CUDA_TRY_NOTHROW(cudaSetDevice(previous_));
}

}  // namespace ferry::core
