// One slot's TensorRT execution state: an IExecutionContext with its own activation memory, the
// slot's device addresses bound to it, and the host memory of its shape tensors.
#pragma once

#include <NvInferRuntime.h>

#include <memory>
#include <vector>

#include "engines/tensorrt/trt_model.hpp"
#include "engines/tensorrt/trt_shapes.hpp"
#include "ferry/engines/engine.hpp"

namespace ferry::trt {

class trt_context final : public engine_context {
 public:
  // `context` has its shapes set from `memory` already; `io` is its concrete device I/O. Made with
  // the model's GPU current (engine_context makes it current again for enqueue).
  trt_context(std::shared_ptr<const model> m, host_shape_memory memory,
              std::unique_ptr<nvinfer1::IExecutionContext> context, const std::vector<tensor_spec>& io);

 private:
  // setTensorAddress (engine_context checked the name and the 256-byte alignment TensorRT
  // requires). Throws error with TensorRT's last message when it refuses.
  void do_bind(std::size_t index, void* device_address) override;
  // enqueueV3. Throws error with TensorRT's last message when it refuses.
  void do_enqueue(stream_ref stream) override;
  // setInputConsumedEvent: TensorRT records `consumed` once it has read its inputs, so zero-copy
  // input memory is released before the network finishes. Always true (throws if TensorRT refuses).
  [[nodiscard]] bool do_signal_inputs_consumed(cudaEvent_t consumed) override;

  // Destroyed bottom-up: the context first, then the shape memory it points into, then the plan.
  std::shared_ptr<const model> model_;
  host_shape_memory memory_;
  std::unique_ptr<nvinfer1::IExecutionContext> context_;
};

}  // namespace ferry::trt
