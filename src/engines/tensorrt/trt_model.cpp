#include "engines/tensorrt/trt_model.hpp"

#include <cuda_runtime_api.h>

#include <utility>

#include "core/scoped_device.hpp"
#include "engines/tensorrt/trt_logger.hpp"
#include "ferry/core/error.hpp"

namespace ferry::trt {
namespace {

// "device 0 (NVIDIA H200, compute 9.0)": what an architecture mismatch is measured against.
std::string describe_device(int device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "device " + std::to_string(device);
  }
  return "device " + std::to_string(device) + " (" + prop.name + ", compute " + std::to_string(prop.major) + "." +
         std::to_string(prop.minor) + ")";
}

}  // namespace

std::shared_ptr<const model> model::load(const std::string& path, int device) {
  // The file first: a wrong path fails at once, before CUDA or TensorRT start up.
  const std::vector<char> plan = read_plan_file(path);

  core::scoped_device on_device(device);
  std::shared_ptr<model> m(new model("trt:" + path, device));
  logger::clear_errors();
  m->runtime_.reset(nvinfer1::createInferRuntime(shared_logger()));
  if (!m->runtime_)
    throw error(m->name_ + ": TensorRT could not create a runtime (ferry was compiled against TensorRT " +
                format_trt_version(NV_TENSORRT_VERSION) + ", the loaded library is " +
                format_trt_version(getInferLibVersion()) + "): " + logger::last_error());

  logger::clear_errors();
  m->engine_.reset(m->runtime_->deserializeCudaEngine(plan.data(), plan.size()));
  if (!m->engine_)
    throw invalid_argument(describe_plan_failure(path, logger::errors(),
                                                 {format_trt_version(getInferLibVersion()), describe_device(device)}));

  m->io_ = describe_io(*m->engine_, m->name_);
  return m;
}

std::unique_ptr<nvinfer1::IExecutionContext> model::create_context(
    nvinfer1::ExecutionContextAllocationStrategy allocation) const {
  const std::lock_guard lock(create_mutex_);
  logger::clear_errors();
  std::unique_ptr<nvinfer1::IExecutionContext> context(engine_->createExecutionContext(allocation));
  if (!context) throw error(name_ + ": TensorRT could not create an execution context: " + logger::last_error());
  return context;
}

}  // namespace ferry::trt
