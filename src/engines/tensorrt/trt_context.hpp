// One slot's TensorRT execution state: an IExecutionContext with its own activation memory, the
// slot's device addresses bound to it, and the host memory of its shape tensors.
#pragma once

#include <NvInferRuntime.h>

#include <memory>
#include <string_view>
#include <vector>

#include "engines/tensorrt/trt_model.hpp"
#include "engines/tensorrt/trt_shapes.hpp"
#include "ferry/engine.hpp"

namespace ferry::trt {

class trt_context final : public engine_context {
 public:
  // `context` has its shapes set from `memory` already; `io` is its concrete device I/O.
  trt_context(std::shared_ptr<const model> m, host_shape_memory memory,
              std::unique_ptr<nvinfer1::IExecutionContext> context, std::vector<tensor_spec> io);

  // setTensorAddress. Throws invalid_argument for an unknown name, a null address or one that is
  // not 256-byte aligned.
  void bind(std::string_view tensor, void* device_address) override;
  // enqueueV3 on `stream`. Throws invalid_argument naming unbound tensors, error with TensorRT's
  // last message when it refuses.
  void enqueue(stream_ref stream) override;
  // setInputConsumedEvent: TensorRT records `consumed` once it has read its inputs, so zero-copy
  // input memory is released before the network finishes. Always true (throws if TensorRT refuses).
  [[nodiscard]] bool signal_inputs_consumed(cudaEvent_t consumed) override;

 private:
  // Destroyed bottom-up: the context first, then the shape memory it points into, then the plan.
  std::shared_ptr<const model> model_;
  host_shape_memory memory_;
  std::unique_ptr<nvinfer1::IExecutionContext> context_;
  std::vector<tensor_spec> io_;
  std::vector<bool> bound_;
};

}  // namespace ferry::trt
