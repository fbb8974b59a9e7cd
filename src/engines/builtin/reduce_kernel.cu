// reduce: a large input folded into reduce_buckets sums, like a classifier head. One block per
// bucket; every thread adds its strided elements in index order, then a shared-memory tree with a
// fixed shape combines the threads. No atomics, so the result does not depend on scheduling and
// two runs on the same input are bit-identical (a single pass is enough: each bucket has exactly
// one block, so there is no cross-block combination to order).
#include "engines/builtin/kernels.hpp"
#include "ferry/core/error.hpp"

namespace ferry::builtin {
namespace {

constexpr int threads_per_block = 256;

__global__ void chunk_sums_kernel(const float* in, std::size_t n, float* sums, int passes) {
  __shared__ float partial[threads_per_block];
  const unsigned bucket = blockIdx.x;
  const std::size_t begin = chunk_begin(bucket, n, reduce_buckets);
  const std::size_t end = chunk_begin(bucket + 1, n, reduce_buckets);

  // 16-byte loads over the 16-byte-aligned middle of the chunk: fewer, wider requests keep more
  // bytes in flight, which is what a zero-copy read over PCIe needs to approach the link's peak.
  // The ragged head and tail (under 4 elements each) are added by their own threads. The order of
  // additions is fixed by the thread index, so results stay bit-identical run to run.
  const std::size_t aligned_begin = (begin + 3) / 4 * 4;
  const std::size_t aligned_end = end < aligned_begin ? aligned_begin : end / 4 * 4;
  float acc = 0.0F;
  for (int pass = 0; pass < passes; ++pass) {
    // Each pass starts from the previous pass's sum times zero: the same +-0 start as a single pass
    // (so the sums stay bit-identical), but a value the compiler must compute, so no pass's loads
    // are dropped (x * 0 is not foldable under IEEE rules: x may be infinite or NaN).
    acc *= 0.0F;
    if (begin + threadIdx.x < aligned_begin && begin + threadIdx.x < end) acc += in[begin + threadIdx.x];
    const auto* in4 = reinterpret_cast<const float4*>(in);
#pragma unroll 4
    for (std::size_t v = aligned_begin / 4 + threadIdx.x; v < aligned_end / 4; v += threads_per_block) {
      const float4 x = in4[v];
      acc += (x.x + x.y) + (x.z + x.w);
    }
    if (aligned_end + threadIdx.x < end && aligned_end + threadIdx.x >= aligned_begin)
      acc += in[aligned_end + threadIdx.x];
  }
  partial[threadIdx.x] = acc;
  __syncthreads();

  for (unsigned active = threads_per_block / 2; active > 0; active /= 2) {
    if (threadIdx.x < active) partial[threadIdx.x] += partial[threadIdx.x + active];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[bucket] = partial[0];
}

}  // namespace

void launch_chunk_sums(const float* in, std::size_t n, float* sums, cudaStream_t stream, int passes) {
  chunk_sums_kernel<<<reduce_buckets, threads_per_block, 0, stream>>>(in, n, sums, passes);
  FERRY_CUDA_CHECK_LAUNCH();
}

}  // namespace ferry::builtin
