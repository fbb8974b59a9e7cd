#include "engines/tensorrt/trt_shapes.hpp"

#include <cstdint>
#include <cstring>
#include <string>

#include "engines/builtin/tensor_checks.hpp"
#include "engines/tensorrt/trt_dims.hpp"
#include "engines/tensorrt/trt_logger.hpp"
#include "ferry/core/error.hpp"

namespace ferry::trt {
namespace {

// The values of one shape tensor in the width TensorRT declared (ranges were checked before).
std::vector<std::byte> encode_values(const shape_tensor_decl& decl, const std::vector<std::int64_t>& values) {
  std::vector<std::byte> bytes(values.size() * size_of(decl.type));
  if (decl.type == dtype::i64) {
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto narrow = static_cast<std::int32_t>(values[i]);
    std::memcpy(bytes.data() + i * sizeof narrow, &narrow, sizeof narrow);
  }
  return bytes;
}

[[noreturn]] void refused(const model& m, const std::string& what) {
  throw invalid_argument(m.name() + ": TensorRT refuses " + what + ": " + logger::last_error());
}

}  // namespace

void host_shape_memory::apply(nvinfer1::IExecutionContext& context, const model& m, const input_request& request) {
  logger::clear_errors();
  // Static inputs need no call: their shape is the plan's.
  const auto& declared = m.io().inputs;
  for (std::size_t i = 0; i < declared.size(); ++i) {
    if (!declared[i].spec.is_dynamic()) continue;
    const auto& [name, dims] = request.device_shapes[i];
    if (!context.setInputShape(name.c_str(), to_dims(dims, name)))
      refused(m, "shape " + builtin::format_shape(dims) + " for input '" + name + "'");
  }

  // Every buffer exists before any address is handed out, so none moves afterwards.
  const auto& inputs = m.io().shape_inputs;
  const auto& outputs = m.io().shape_outputs;
  buffers_.clear();
  buffers_.reserve(inputs.size() + outputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    buffers_.push_back(encode_values(inputs[i], request.shape_values[i].dims));
    if (!context.setInputTensorAddress(inputs[i].name.c_str(), buffers_.back().data()))
      refused(m, "values " + builtin::format_shape(request.shape_values[i].dims) + " for host shape tensor '" +
                     inputs[i].name + "'");
  }
  for (const auto& decl : outputs) {
    const auto shape = shape_of(context.getTensorShape(decl.name.c_str()), decl.name);
    require_static_output(m.name(), decl.name, shape);
    buffers_.emplace_back(static_cast<std::size_t>(volume(shape)) * size_of(decl.type));
    if (!context.setTensorAddress(decl.name.c_str(), buffers_.back().data()))
      refused(m, "a host buffer for shape output '" + decl.name + "'");
  }
}

std::vector<tensor_spec> concrete_io(nvinfer1::IExecutionContext& context, const model& m,
                                     const input_request& request) {
  logger::clear_errors();
  // Runs TensorRT's shape calculations once, so a value outside the profile or a shape the
  // network cannot take is reported here, with TensorRT's reason, rather than at enqueue.
  const std::int32_t missing = context.inferShapes(0, nullptr);
  if (missing < 0) refused(m, "these input shapes");
  if (missing > 0)
    throw error(m.name() + ": TensorRT still misses " + std::to_string(missing) +
                " input shape(s) after every input was set: " + logger::last_error());

  std::vector<tensor_spec> io = m.io().io;
  for (auto& spec : io) {
    if (spec.role == tensor_role::input) {
      spec.shape = builtin::find_binding(request.device_shapes, spec.name)->dims;
      continue;
    }
    spec.shape = shape_of(context.getTensorShape(spec.name.c_str()), spec.name);
    require_static_output(m.name(), spec.name, spec.shape);
  }
  return io;
}

}  // namespace ferry::trt
