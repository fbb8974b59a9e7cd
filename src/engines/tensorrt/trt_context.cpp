#include "engines/tensorrt/trt_context.hpp"

#include <string>
#include <utility>

#include "core/scoped_device.hpp"
#include "engines/tensorrt/trt_logger.hpp"
#include "ferry/error.hpp"

namespace ferry::trt {

trt_context::trt_context(std::shared_ptr<const model> m, host_shape_memory memory,
                         std::unique_ptr<nvinfer1::IExecutionContext> context, std::vector<tensor_spec> io)
    : model_(std::move(m)),
      memory_(std::move(memory)),
      context_(std::move(context)),
      io_(std::move(io)),
      bound_(io_.size(), false) {}

void trt_context::bind(std::string_view tensor, void* device_address) {
  for (std::size_t i = 0; i < io_.size(); ++i) {
    if (io_[i].name != tensor) continue;
    check_device_address(model_->name(), tensor, device_address);
    logger::clear_errors();
    if (!context_->setTensorAddress(io_[i].name.c_str(), device_address))
      throw error(model_->name() + ": TensorRT refuses the address for '" + io_[i].name +
                  "': " + logger::last_error());
    bound_[i] = true;
    return;
  }
  std::string names;
  for (const auto& t : io_) names += (names.empty() ? "'" : ", '") + t.name + "'";
  throw invalid_argument(model_->name() + ": no tensor named '" + std::string(tensor) + "'; valid names are " +
                         names);
}

void trt_context::enqueue(stream_ref stream) {
  std::string unbound;
  for (std::size_t i = 0; i < io_.size(); ++i)
    if (!bound_[i]) unbound += (unbound.empty() ? "'" : ", '") + io_[i].name + "'";
  if (!unbound.empty()) throw invalid_argument(model_->name() + ": enqueue before binding " + unbound);

  const core::scoped_device on_device(model_->device());
  logger::clear_errors();
  if (!context_->enqueueV3(stream.get()))
    throw error(model_->name() + ": TensorRT enqueueV3 failed: " + logger::last_error());
}

bool trt_context::signal_inputs_consumed(cudaEvent_t consumed) {
  logger::clear_errors();
  if (!context_->setInputConsumedEvent(consumed))
    throw error(model_->name() + ": TensorRT refuses the input-consumed event: " + logger::last_error());
  return true;
}

}  // namespace ferry::trt
