#include "engines/builtin/launch_support.hpp"

#include <cuda_runtime_api.h>

#include "ferry/core/error.hpp"

namespace ferry::builtin {

int current_device() {
  int device = 0;
  FERRY_CUDA_TRY(cudaGetDevice(&device));
  return device;
}

int grid_limit(int device) {
  int multiprocessors = 0;
  FERRY_CUDA_TRY(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  constexpr int blocks_per_multiprocessor = 8;  // 8 x 256 threads = a full Hopper SM
  return multiprocessors * blocks_per_multiprocessor;
}

}  // namespace ferry::builtin
