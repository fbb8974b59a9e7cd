// u8 HWC -> normalised CHW, the preprocessing a vision model expects, done on the GPU so images
// cross the bus as bytes. One thread per pixel: it reads the pixel's three bytes and writes one
// value to each channel plane (the plane writes are coalesced across the warp).
#include "engines/builtin/kernels.hpp"
#include "ferry/core/error.hpp"

namespace ferry::builtin {
namespace {

constexpr int threads_per_block = 256;

__device__ __forceinline__ void store(float* out, std::size_t i, float v) { out[i] = v; }
__device__ __forceinline__ void store(__half* out, std::size_t i, float v) { out[i] = __float2half_rn(v); }

template <typename T>
__global__ void u8_hwc_to_chw_kernel(const std::uint8_t* images, T* out, std::size_t pixels, std::size_t plane,
                                     channel_affine affine) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t p = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < pixels; p += stride) {
    const std::size_t image = p / plane;
    const std::size_t offset = p - image * plane;
    const std::size_t base = image * 3 * plane + offset;
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      const float value = static_cast<float>(images[p * 3 + c]);
      store(out, base + static_cast<std::size_t>(c) * plane, __fmaf_rn(value, affine.scale[c], affine.bias[c]));
    }
  }
}

template <typename T>
void launch(const std::uint8_t* images, T* out, std::int64_t batch, std::int64_t height, std::int64_t width,
            const channel_affine& affine, int max_blocks, cudaStream_t stream) {
  const auto plane = static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  const std::size_t pixels = static_cast<std::size_t>(batch) * plane;
  std::size_t blocks = (pixels + threads_per_block - 1) / threads_per_block;
  if (blocks < 1) blocks = 1;
  if (blocks > static_cast<std::size_t>(max_blocks)) blocks = static_cast<std::size_t>(max_blocks);
  u8_hwc_to_chw_kernel<T>
      <<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(images, out, pixels, plane, affine);
  FERRY_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_u8_hwc_to_chw(const std::uint8_t* images, float* out, std::int64_t batch, std::int64_t height,
                          std::int64_t width, const channel_affine& affine, int max_blocks, cudaStream_t stream) {
  launch(images, out, batch, height, width, affine, max_blocks, stream);
}

void launch_u8_hwc_to_chw(const std::uint8_t* images, __half* out, std::int64_t batch, std::int64_t height,
                          std::int64_t width, const channel_affine& affine, int max_blocks, cudaStream_t stream) {
  launch(images, out, batch, height, width, affine, max_blocks, stream);
}

}  // namespace ferry::builtin
