// describe_io: one pass over the plan's I/O tensors, sorting each into ferry's buckets.
#include <utility>

#include "engines/tensorrt/trt_dims.hpp"
#include "engines/tensorrt/trt_model.hpp"

namespace ferry::trt {
namespace {

// Profile 0's min and max for a dynamic device input. Static inputs have no range to check (their
// shape is the plan's), and asking for one would only make TensorRT log an error.
void add_profile_range(const nvinfer1::ICudaEngine& engine, const char* name, input_decl& decl) {
  if (!decl.spec.is_dynamic() || engine.getNbOptimizationProfiles() < 1) return;
  const nvinfer1::Dims min = engine.getProfileShape(name, 0, nvinfer1::OptProfileSelector::kMIN);
  const nvinfer1::Dims max = engine.getProfileShape(name, 0, nvinfer1::OptProfileSelector::kMAX);
  const auto rank = static_cast<std::int32_t>(decl.spec.shape.size());
  if (min.nbDims != rank || max.nbDims != rank) return;
  decl.min = shape_of(min, name);
  decl.max = shape_of(max, name);
}

}  // namespace

model_io describe_io(const nvinfer1::ICudaEngine& engine, const std::string& engine_name) {
  model_io out;
  const std::int32_t count = engine.getNbIOTensors();
  for (std::int32_t i = 0; i < count; ++i) {
    const char* name = engine.getIOTensorName(i);
    const io_kind kind = classify_io(name, static_cast<std::int32_t>(engine.getTensorIOMode(name)),
                                     static_cast<std::int32_t>(engine.getTensorLocation(name)));
    const dtype type = to_ferry_dtype(engine_name, name, static_cast<std::int32_t>(engine.getTensorDataType(name)));
    std::vector<std::int64_t> shape = shape_of(engine.getTensorShape(name), name);

    switch (kind) {
      case io_kind::host_shape_input:
        out.shape_inputs.push_back(make_shape_tensor_decl(engine_name, name, type, std::move(shape)));
        continue;
      case io_kind::host_shape_output:
        out.shape_outputs.push_back(make_shape_tensor_decl(engine_name, name, type, std::move(shape)));
        continue;
      case io_kind::device_input:
      case io_kind::device_output:
        break;
    }
    require_linear_format(engine_name, name, static_cast<std::int32_t>(engine.getTensorFormat(name)));
    tensor_spec spec;
    spec.name = name;
    spec.type = type;
    spec.shape = std::move(shape);
    spec.role = kind == io_kind::device_input ? tensor_role::input : tensor_role::output;
    out.io.push_back(spec);
    if (kind == io_kind::device_input) {
      input_decl decl{std::move(spec), {}, {}};
      add_profile_range(engine, name, decl);
      out.inputs.push_back(std::move(decl));
    }
  }
  return out;
}

}  // namespace ferry::trt
