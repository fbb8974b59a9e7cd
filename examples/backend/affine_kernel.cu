// The affine example backend's one kernel: y = scale * x + bias, written as ferry's built-in
// `touch` kernel is (float4 body, grid-stride, at most 8 blocks of 256 per SM) so the two differ
// only by the plugin boundary. C linkage: affine.c is plain C.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace {

constexpr int threads_per_block = 256;

__global__ void affine_kernel(const float* x, float* y, std::size_t n, float scale, float bias) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // ferry binds 256-byte aligned addresses, so the float4 body is aligned; the tail goes scalar.
  const std::size_t vectors = n / 4;
  const auto* x4 = reinterpret_cast<const float4*>(x);
  auto* y4 = reinterpret_cast<float4*>(y);
  for (std::size_t i = first; i < vectors; i += stride) {
    float4 v = x4[i];
    v.x = __fmaf_rn(v.x, scale, bias);
    v.y = __fmaf_rn(v.y, scale, bias);
    v.z = __fmaf_rn(v.z, scale, bias);
    v.w = __fmaf_rn(v.w, scale, bias);
    y4[i] = v;
  }
  for (std::size_t i = vectors * 4 + first; i < n; i += stride) y[i] = __fmaf_rn(x[i], scale, bias);
}

}  // namespace

// The grid's cap for the current device: 8 blocks of 256 threads per SM, as `touch` has it.
extern "C" const char* affine_max_blocks(int* blocks) {
  int device = 0, multiprocessors = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status == cudaSuccess) status = cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
  *blocks = multiprocessors * 8;
  return status == cudaSuccess ? nullptr : cudaGetErrorString(status);
}

extern "C" const char* affine_launch(const float* x, float* y, std::size_t n, float scale, float bias, int max_blocks,
                                     cudaStream_t stream) {
  std::size_t blocks = (n / 4 + threads_per_block - 1) / threads_per_block;
  if (blocks < 1) blocks = 1;
  if (blocks > static_cast<std::size_t>(max_blocks)) blocks = static_cast<std::size_t>(max_blocks);
  affine_kernel<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(x, y, n, scale, bias);
  const cudaError_t status = cudaPeekAtLastError();
  return status == cudaSuccess ? nullptr : cudaGetErrorString(status);
}
