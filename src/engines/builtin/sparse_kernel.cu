// sparse: embedding-style lookups. One warp per requested page: 32 lanes read the page's 1024
// floats as float4 (8 loads each, all in flight at once), then a butterfly of shuffles combines
// them. The order of additions is fixed, so results are bit-identical across runs.
#include "engines/builtin/kernels.hpp"
#include "ferry/core/error.hpp"

namespace ferry::builtin {
namespace {

constexpr int threads_per_block = 256;
constexpr int warp_size = 32;
constexpr int warps_per_block = threads_per_block / warp_size;
constexpr int vectors_per_lane = static_cast<int>(page_floats) / 4 / warp_size;  // 8
static_assert(page_floats % (4 * warp_size) == 0, "a page must split evenly over a warp");

__global__ void page_sums_kernel(const float* table, std::int64_t pages, const std::int32_t* indices,
                                 std::int64_t rows_count, float* rows) {
  const unsigned lane = threadIdx.x % warp_size;
  const std::int64_t first_row = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / warp_size;
  const std::int64_t row_stride = static_cast<std::int64_t>(gridDim.x) * warps_per_block;

  // `row` is the same for every lane of a warp, so the branches below never split a warp and
  // the full-mask shuffles are safe.
  for (std::int64_t row = first_row; row < rows_count; row += row_stride) {
    const std::int32_t page = indices[row];
    if (page < 0 || page >= pages) {
      // Validated here, not trusted: a bad index must not read outside the table.
      if (lane == 0) rows[row] = __int_as_float(0x7fc00000);  // quiet NaN
      continue;
    }
    const auto* page4 = reinterpret_cast<const float4*>(table + static_cast<std::size_t>(page) * page_floats);
    float acc = 0.0F;
#pragma unroll
    for (int k = 0; k < vectors_per_lane; ++k) {
      const float4 v = page4[lane + k * warp_size];
      acc += v.x;
      acc += v.y;
      acc += v.z;
      acc += v.w;
    }
#pragma unroll
    for (int offset = warp_size / 2; offset > 0; offset /= 2) acc += __shfl_xor_sync(0xffffffffU, acc, offset);
    if (lane == 0) rows[row] = acc;
  }
}

}  // namespace

void launch_page_sums(const float* table, std::int64_t pages, const std::int32_t* indices, std::int64_t rows_count,
                      float* rows, int max_blocks, cudaStream_t stream) {
  std::int64_t blocks = (rows_count + warps_per_block - 1) / warps_per_block;
  if (blocks < 1) blocks = 1;
  if (blocks > max_blocks) blocks = max_blocks;
  page_sums_kernel<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(table, pages, indices, rows_count,
                                                                                    rows);
  FERRY_CUDA_CHECK_LAUNCH();
}

}  // namespace ferry::builtin
