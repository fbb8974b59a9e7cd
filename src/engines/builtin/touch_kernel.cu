// touch: the memory-bound workload. One read and one write per element, nothing else, so its
// time is the floor any transfer strategy is compared against.
#include "engines/builtin/kernels.hpp"
#include "ferry/core/error.hpp"

namespace ferry::builtin {
namespace {

constexpr int threads_per_block = 256;

// fmaf(x, 2, 1) is exactly round(2x + 1) because 2x is exact, so the CPU reference's fmaf gives
// the same bits whether or not either compiler contracts.
__device__ __forceinline__ float touch_one(float x) { return __fmaf_rn(x, 2.0F, 1.0F); }

__global__ void touch_kernel(const float* in, float* out, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Bound addresses are 256-byte aligned, so the float4 body is always aligned; the tail of up
  // to three elements goes scalar.
  const std::size_t vectors = n / 4;
  const auto* in4 = reinterpret_cast<const float4*>(in);
  auto* out4 = reinterpret_cast<float4*>(out);
  for (std::size_t i = first; i < vectors; i += stride) {
    float4 v = in4[i];
    v.x = touch_one(v.x);
    v.y = touch_one(v.y);
    v.z = touch_one(v.z);
    v.w = touch_one(v.w);
    out4[i] = v;
  }
  for (std::size_t i = vectors * 4 + first; i < n; i += stride) out[i] = touch_one(in[i]);
}

}  // namespace

void launch_touch(const float* in, float* out, std::size_t n, int max_blocks, cudaStream_t stream) {
  const std::size_t vectors = n / 4;
  std::size_t blocks = (vectors + threads_per_block - 1) / threads_per_block;
  if (blocks < 1) blocks = 1;
  if (blocks > static_cast<std::size_t>(max_blocks)) blocks = static_cast<std::size_t>(max_blocks);
  touch_kernel<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(in, out, n);
  FERRY_CUDA_CHECK_LAUNCH();
}

}  // namespace ferry::builtin
