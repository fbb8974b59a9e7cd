// Layout facts shared by the GPU kernels and the CPU references of the built-in workloads, so
// both sides split and scale data the same way.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define FERRY_HOST_DEVICE __host__ __device__
#else
#define FERRY_HOST_DEVICE
#endif

namespace ferry::builtin {

// reduce: one output per bucket, like the logits of an ImageNet classifier head.
inline constexpr int reduce_buckets = 1000;

// sparse: the table is read in pages of 4096 bytes, the granularity of a host page and of a
// managed-memory fault, so each index touches exactly one page.
inline constexpr std::size_t page_floats = 1024;

// First element of bucket `bucket` when n elements are split into `buckets` contiguous chunks
// whose sizes differ by at most one.
[[nodiscard]] FERRY_HOST_DEVICE inline std::size_t chunk_begin(std::size_t bucket, std::size_t n, std::size_t buckets) {
  return bucket * n / buckets;
}

// u8 -> normalised value as one fused multiply-add, value * scale[c] + bias[c], with
// scale = 1 / (255 * stddev) and bias = -mean / stddev. Both sides use an explicit fma with the
// same float constants, so the GPU and the CPU agree bit for bit.
struct channel_affine {
  float scale[3];
  float bias[3];
};

}  // namespace ferry::builtin
