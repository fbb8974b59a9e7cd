// A deserialized TensorRT plan and what ferry makes of its I/O, shared by the engine and every
// context made from it (contexts hold it, so the plan outlives them whatever order callers
// destroy things in).
#pragma once

#include <NvInferRuntime.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engines/tensorrt/trt_mapping.hpp"
#include "ferry/engines/engine.hpp"

namespace ferry::trt {

// The plan's I/O sorted into what ferry allocates and what the contexts keep on the host.
struct model_io {
  std::vector<tensor_spec> io;                   // device tensors, in TensorRT's order: ferry's io()
  std::vector<input_decl> inputs;                // the device inputs, with profile 0's ranges
  std::vector<shape_tensor_decl> shape_inputs;   // host shape tensor inputs (values from bindings)
  std::vector<shape_tensor_decl> shape_outputs;  // host shape tensor outputs (written by TensorRT)
};

class model {
 public:
  // Reads and deserializes the plan on `device`. Throws invalid_argument naming the file for a
  // missing, unreadable, empty or corrupt file and for a plan built by another TensorRT version
  // or for another GPU architecture; unsupported for I/O ferry cannot feed.
  [[nodiscard]] static std::shared_ptr<const model> load(const std::string& path, int device);

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] const model_io& io() const noexcept { return io_; }

  // A new execution context (device `device()` must be current). kSTATIC gives it its own
  // activation memory (one per slot); kUSER_MANAGED gives none, enough for shape inference.
  // Throws error with TensorRT's message when it cannot make one (out of device memory, mostly).
  [[nodiscard]] std::unique_ptr<nvinfer1::IExecutionContext> create_context(
      nvinfer1::ExecutionContextAllocationStrategy allocation) const;

  model(const model&) = delete;
  model& operator=(const model&) = delete;

 private:
  model(std::string name, int device) : name_(std::move(name)), device_(device) {}

  std::string name_;
  int device_;
  std::unique_ptr<nvinfer1::IRuntime> runtime_;
  std::unique_ptr<nvinfer1::ICudaEngine> engine_;  // after runtime_, so it is destroyed first
  model_io io_;
  // TensorRT documents concurrent use of *different* contexts; making them is serialised here.
  mutable std::mutex create_mutex_;
};

// Sorts the I/O of a deserialized plan; throws unsupported naming the tensor for a dtype, layout
// or shape tensor ferry cannot handle.
[[nodiscard]] model_io describe_io(const nvinfer1::ICudaEngine& engine, const std::string& engine_name);

}  // namespace ferry::trt
