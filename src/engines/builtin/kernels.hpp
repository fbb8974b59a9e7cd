// Stream-ordered launchers of the built-in workloads' kernels (one .cu file each). They only
// enqueue: no allocation, no synchronisation, so they can be captured into a CUDA graph. Each
// checks its launch and throws cuda_error on failure. `max_blocks` caps grid-stride grids (see
// grid_limit in launch_support.hpp); device pointers are 256-byte aligned by the callers.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "engines/builtin/workload_layout.hpp"

namespace ferry::builtin {

// out[i] = in[i] * 2 + 1.
void launch_touch(const float* in, float* out, std::size_t n, int max_blocks, cudaStream_t stream);

// sums[b] = sum of chunk b of in[0, n) (see chunk_begin), reduce_buckets outputs, in a fixed
// order so repeated runs are bit-identical. passes > 1 reads the input that many times (each pass
// recomputes the same sums) to model a kernel that re-reads its input.
void launch_chunk_sums(const float* in, std::size_t n, float* sums, cudaStream_t stream, int passes = 1);

// rows[j] = sum of page indices[j] of table (pages of page_floats floats); NaN for an index
// outside [0, pages).
void launch_page_sums(const float* table, std::int64_t pages, const std::int32_t* indices, std::int64_t rows_count,
                      float* rows, int max_blocks, cudaStream_t stream);

// data[i] = max(data[i], 0) in place.
void launch_relu(__half* data, std::size_t n, int max_blocks, cudaStream_t stream);

// u8 HWC images [batch, height, width, 3] -> CHW [batch, 3, height, width], value * scale[c] +
// bias[c], as f32 or f16.
void launch_u8_hwc_to_chw(const std::uint8_t* images, float* out, std::int64_t batch, std::int64_t height,
                          std::int64_t width, const channel_affine& affine, int max_blocks, cudaStream_t stream);
void launch_u8_hwc_to_chw(const std::uint8_t* images, __half* out, std::int64_t batch, std::int64_t height,
                          std::int64_t width, const channel_affine& affine, int max_blocks, cudaStream_t stream);

}  // namespace ferry::builtin
