// reduce: a large input folded into reduce_buckets sums, like a classifier head. One block per
// bucket; every thread adds its strided elements in index order, then a shared-memory tree with a
// fixed shape combines the threads. No atomics, so the result does not depend on scheduling and
// two runs on the same input are bit-identical (a single pass is enough: each bucket has exactly
// one block, so there is no cross-block combination to order).
#include "engines/builtin/kernels.hpp"
#include "ferry/error.hpp"

namespace ferry::builtin {
namespace {

constexpr int threads_per_block = 256;

__global__ void chunk_sums_kernel(const float* in, std::size_t n, float* sums) {
  __shared__ float partial[threads_per_block];
  const unsigned bucket = blockIdx.x;
  const std::size_t begin = chunk_begin(bucket, n, reduce_buckets);
  const std::size_t end = chunk_begin(bucket + 1, n, reduce_buckets);

  float acc = 0.0F;
#pragma unroll 4
  for (std::size_t i = begin + threadIdx.x; i < end; i += threads_per_block) acc += in[i];
  partial[threadIdx.x] = acc;
  __syncthreads();

  for (unsigned active = threads_per_block / 2; active > 0; active /= 2) {
    if (threadIdx.x < active) partial[threadIdx.x] += partial[threadIdx.x + active];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[bucket] = partial[0];
}

}  // namespace

void launch_chunk_sums(const float* in, std::size_t n, float* sums, cudaStream_t stream) {
  chunk_sums_kernel<<<reduce_buckets, threads_per_block, 0, stream>>>(in, n, sums);
  FERRY_CUDA_CHECK_LAUNCH();
}

}  // namespace ferry::builtin
