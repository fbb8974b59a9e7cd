#include "engines/tensorrt/trt_context.hpp"

#include <string>
#include <utility>

#include "engines/tensorrt/trt_logger.hpp"
#include "ferry/core/error.hpp"

namespace ferry::trt {

trt_context::trt_context(std::shared_ptr<const model> m, host_shape_memory memory,
                         std::unique_ptr<nvinfer1::IExecutionContext> context, const std::vector<tensor_spec>& io)
    : engine_context(m->name(), tensor_names(io)),
      model_(std::move(m)),
      memory_(std::move(memory)),
      context_(std::move(context)) {}

void trt_context::do_bind(std::size_t index, void* device_address) {
  logger::clear_errors();
  if (!context_->setTensorAddress(tensor_name(index).c_str(), device_address))
    throw error(model_->name() + ": TensorRT refuses the address for '" + tensor_name(index) +
                "': " + logger::last_error());
}

void trt_context::do_enqueue(stream_ref stream) {
  logger::clear_errors();
  if (!context_->enqueueV3(stream.get()))
    throw error(model_->name() + ": TensorRT enqueueV3 failed: " + logger::last_error());
}

bool trt_context::do_signal_inputs_consumed(cudaEvent_t consumed) {
  logger::clear_errors();
  if (!context_->setInputConsumedEvent(consumed))
    throw error(model_->name() + ": TensorRT refuses the input-consumed event: " + logger::last_error());
  return true;
}

}  // namespace ferry::trt
