#include "engines/builtin/host_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace ferry::builtin {

void touch_on_host(std::span<const float> in, std::span<float> out) {
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = std::fmaf(in[i], 2.0F, 1.0F);
}

void chunk_sums_on_host(std::span<const float> in, std::span<float> sums) {
  const std::size_t n = in.size();
  const std::size_t buckets = sums.size();
  for (std::size_t b = 0; b < buckets; ++b) {
    double acc = 0.0;
    const std::size_t end = chunk_begin(b + 1, n, buckets);
    for (std::size_t i = chunk_begin(b, n, buckets); i < end; ++i) acc += in[i];
    sums[b] = static_cast<float>(acc);
  }
}

void page_sums_on_host(std::span<const float> table, std::span<const std::int32_t> indices, std::span<float> rows) {
  const auto pages = static_cast<std::int64_t>(table.size() / page_floats);
  for (std::size_t j = 0; j < indices.size(); ++j) {
    const std::int32_t page = indices[j];
    if (page < 0 || page >= pages) {
      rows[j] = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    double acc = 0.0;
    const float* first = table.data() + static_cast<std::size_t>(page) * page_floats;
    for (std::size_t i = 0; i < page_floats; ++i) acc += first[i];
    rows[j] = static_cast<float>(acc);
  }
}

void mlp_on_host(std::span<const __half> weights, int layers, int width, std::span<const __half> in,
                 std::span<__half> out) {
  const auto w = static_cast<std::size_t>(width);
  const std::size_t batch = in.size() / w;
  // Weights converted once; x holds the current layer's input as float.
  std::vector<float> x(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) x[i] = __half2float(in[i]);
  std::vector<float> acc(w);
  std::vector<float> matrix(w * w);
  for (int layer = 0; layer < layers; ++layer) {
    const __half* layer_weights = weights.data() + static_cast<std::size_t>(layer) * w * w;
    for (std::size_t i = 0; i < w * w; ++i) matrix[i] = __half2float(layer_weights[i]);
    for (std::size_t b = 0; b < batch; ++b) {
      std::fill(acc.begin(), acc.end(), 0.0F);
      float* row = x.data() + b * w;
      // i-outer order walks the row-major weights contiguously.
      for (std::size_t i = 0; i < w; ++i) {
        const float xi = row[i];
        const float* wi = matrix.data() + i * w;
        for (std::size_t j = 0; j < w; ++j) acc[j] += xi * wi[j];
      }
      // Round to fp16 as the GPU's fp16 output does; relu(round(a)) == round(relu(a)).
      for (std::size_t j = 0; j < w; ++j) {
        const float rounded = __half2float(__float2half_rn(acc[j]));
        row[j] = rounded > 0.0F ? rounded : 0.0F;
      }
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = __float2half_rn(x[i]);
}

namespace {

template <typename T, typename Store>
void hwc_to_chw(std::span<const std::uint8_t> images, std::int64_t height, std::int64_t width,
                const channel_affine& affine, std::span<T> out, Store store) {
  const auto plane = static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  const std::size_t pixels = images.size() / 3;
  for (std::size_t p = 0; p < pixels; ++p) {
    const std::size_t image = p / plane;
    const std::size_t base = image * 3 * plane + (p - image * plane);
    for (std::size_t c = 0; c < 3; ++c) {
      const float value = static_cast<float>(images[p * 3 + c]);
      out[base + c * plane] = store(std::fmaf(value, affine.scale[c], affine.bias[c]));
    }
  }
}

}  // namespace

void u8_hwc_to_chw_on_host(std::span<const std::uint8_t> images, std::int64_t height, std::int64_t width,
                           const channel_affine& affine, std::span<float> out) {
  hwc_to_chw(images, height, width, affine, out, [](float v) { return v; });
}

void u8_hwc_to_chw_on_host(std::span<const std::uint8_t> images, std::int64_t height, std::int64_t width,
                           const channel_affine& affine, std::span<__half> out) {
  hwc_to_chw(images, height, width, affine, out, [](float v) { return __float2half_rn(v); });
}

}  // namespace ferry::builtin
