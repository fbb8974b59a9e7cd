// nvinfer1::Dims <-> ferry shapes, the two directions every TensorRT call site needs.
#pragma once

#include <NvInferRuntime.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engines/tensorrt/trt_mapping.hpp"
#include "ferry/core/error.hpp"

namespace ferry::trt {

// A TensorRT shape as a ferry shape (-1 -> dynamic_dim); throws error naming the tensor when
// TensorRT reports none (an unknown name gives nbDims -1).
[[nodiscard]] inline std::vector<std::int64_t> shape_of(const nvinfer1::Dims& dims, std::string_view tensor) {
  return to_ferry_shape(tensor, dims.nbDims, std::span<const std::int64_t>(dims.d));
}

// A concrete ferry shape as TensorRT Dims. Ranks were checked against the plan before, so a rank
// above MAX_DIMS here is a bug, not a user mistake.
[[nodiscard]] inline nvinfer1::Dims to_dims(std::span<const std::int64_t> shape, std::string_view tensor) {
  nvinfer1::Dims dims{};
  if (shape.size() > static_cast<std::size_t>(nvinfer1::Dims::MAX_DIMS))
    throw error("tensor '" + std::string(tensor) + "' has rank " + std::to_string(shape.size()) +
                ", more than TensorRT's " + std::to_string(nvinfer1::Dims::MAX_DIMS));
  dims.nbDims = static_cast<std::int32_t>(shape.size());
  std::copy(shape.begin(), shape.end(), dims.d);
  return dims;
}

}  // namespace ferry::trt
