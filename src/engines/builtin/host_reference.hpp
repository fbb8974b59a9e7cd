// CPU versions of the built-in workloads: what the GPU kernels compute, written as plain loops
// so they are easy to check by eye. Sums accumulate in double (the reference is the more
// accurate side); element-wise maps use the same fused multiply-adds as the kernels and agree
// with them bit for bit.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <span>

#include "engines/builtin/workload_layout.hpp"

namespace ferry::builtin {

// out[i] = in[i] * 2 + 1; in and out have the same size.
void touch_on_host(std::span<const float> in, std::span<float> out);

// sums[b] = sum of chunk b of in, for sums.size() == reduce_buckets contiguous chunks.
void chunk_sums_on_host(std::span<const float> in, std::span<float> sums);

// rows[j] = sum of page indices[j] of table (table.size() / page_floats whole pages), NaN when
// the index is outside them.
void page_sums_on_host(std::span<const float> table, std::span<const std::int32_t> indices, std::span<float> rows);

// `layers` layers of y = relu(x . W_k) on rows of `width` values: weights holds layers row-major
// [width (in), width (out)] matrices; products accumulate in fp32 and each layer's output is
// rounded to fp16, as cuBLAS does with fp16 in/out and fp32 compute.
void mlp_on_host(std::span<const __half> weights, int layers, int width, std::span<const __half> in,
                 std::span<__half> out);

// u8 HWC [batch, height, width, 3] -> CHW [batch, 3, height, width] as value * scale + bias.
void u8_hwc_to_chw_on_host(std::span<const std::uint8_t> images, std::int64_t height, std::int64_t width,
                           const channel_affine& affine, std::span<float> out);
void u8_hwc_to_chw_on_host(std::span<const std::uint8_t> images, std::int64_t height, std::int64_t width,
                           const channel_affine& affine, std::span<__half> out);

}  // namespace ferry::builtin
