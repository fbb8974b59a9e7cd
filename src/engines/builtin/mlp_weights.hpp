// The mlp workload's weights: random, but the same on every run and every machine, so GPU and
// CPU results and separate processes agree without shipping a model file.
#pragma once

#include <cuda_fp16.h>

#include <vector>

namespace ferry::builtin {

// `layers` row-major [width (in), width (out)] fp16 matrices, back to back, drawn uniformly from
// [-a, a] with a = sqrt(6 / width) (He-uniform): the variance relu halves is restored by each
// layer, so activations neither vanish nor blow up with depth. Fixed seed per layer.
[[nodiscard]] std::vector<__half> make_mlp_weights(int layers, int width);

}  // namespace ferry::builtin
