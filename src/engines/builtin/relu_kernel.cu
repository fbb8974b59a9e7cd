// relu for the mlp workload, applied in place after each cuBLAS GEMM (cublasGemmEx has no
// epilogue). The activations are tiny next to the weights, so this pass costs little.
#include "engines/builtin/kernels.hpp"
#include "ferry/core/error.hpp"

namespace ferry::builtin {
namespace {

constexpr int threads_per_block = 256;

__global__ void relu_kernel(__half* data, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    // Compare in float so NaN and -0 map to +0 exactly as the CPU reference does.
    if (!(__half2float(data[i]) > 0.0F)) data[i] = __float2half_rn(0.0F);
  }
}

}  // namespace

void launch_relu(__half* data, std::size_t n, int max_blocks, cudaStream_t stream) {
  std::size_t blocks = (n + threads_per_block - 1) / threads_per_block;
  if (blocks < 1) blocks = 1;
  if (blocks > static_cast<std::size_t>(max_blocks)) blocks = static_cast<std::size_t>(max_blocks);
  relu_kernel<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(data, n);
  FERRY_CUDA_CHECK_LAUNCH();
}

}  // namespace ferry::builtin
