// Putting a checked input request onto an execution context: input shapes, host shape tensor
// values, then the concrete I/O TensorRT derives from them. resolve() does it on a scratch
// context, make_context() on the slot's own.
#pragma once

#include <NvInferRuntime.h>

#include <cstddef>
#include <vector>

#include "engines/tensorrt/trt_mapping.hpp"
#include "engines/tensorrt/trt_model.hpp"
#include "ferry/engines/engine.hpp"

namespace ferry::trt {

// Host memory for a context's shape tensors: the input values TensorRT reads (at shape inference
// and again at every enqueueV3) and room for the shape outputs it writes. The context holds the
// addresses, so this must outlive it; moving it keeps every buffer where it is.
class host_shape_memory {
 public:
  // Sets every dynamic input's shape and every shape tensor's address on `context`, then gives
  // each host shape output a buffer of the size TensorRT now reports. Throws invalid_argument with
  // TensorRT's message when it refuses a shape or value (e.g. a value outside the profile).
  void apply(nvinfer1::IExecutionContext& context, const model& m, const input_request& request);

 private:
  std::vector<std::vector<std::byte>> buffers_;
};

// The concrete device I/O of a context whose inputs are all set: input shapes from `request`,
// output shapes from TensorRT. Throws invalid_argument with TensorRT's message when shape
// inference fails, unsupported for an output whose size depends on the data.
[[nodiscard]] std::vector<tensor_spec> concrete_io(nvinfer1::IExecutionContext& context, const model& m,
                                                   const input_request& request);

}  // namespace ferry::trt
