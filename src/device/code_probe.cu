// Whether this build carries code the GPU can run: a kernel of ferry's own, compiled for the same
// architectures as every other, asked for its attributes on that GPU.
#include <cuda_runtime_api.h>

#include "core/scoped_device.hpp"
#include "ferry/device/device_diagnosis.hpp"

namespace ferry {
namespace {

__global__ void code_probe() {}

}  // namespace

bool ferry_has_code_for(int ordinal) {
  const core::scoped_device on(ordinal);
  cudaFuncAttributes attributes{};
  const cudaError_t status = cudaFuncGetAttributes(&attributes, code_probe);
  (void)cudaGetLastError();
  // No machine code for the GPU and no PTX it can compile: cudaErrorNoKernelImageForDevice (or
  // cudaErrorInvalidDeviceFunction on older drivers). Anything else is not about the build.
  return status != cudaErrorNoKernelImageForDevice && status != cudaErrorInvalidDeviceFunction;
}

}  // namespace ferry
