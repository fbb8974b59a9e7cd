#include "core/mapped_device_pointer.hpp"

#include <cuda_runtime_api.h>

#include "ferry/core/error.hpp"

namespace ferry::core {

void* mapped_device_pointer(void* host) {
  void* device = nullptr;
  FERRY_CUDA_TRY(cudaHostGetDevicePointer(&device, host, 0));
  return device;
}

}  // namespace ferry::core
