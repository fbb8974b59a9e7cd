#include "engines/builtin/tensor_checks.hpp"

#include <utility>

#include "ferry/core/error.hpp"

namespace ferry::builtin {

tensor_spec make_tensor(std::string name, dtype type, std::vector<std::int64_t> shape, tensor_role role,
                        std::optional<std::int64_t> index_bound) {
  tensor_spec spec;
  spec.name = std::move(name);
  spec.type = type;
  spec.shape = std::move(shape);
  spec.role = role;
  spec.index_bound = index_bound;
  return spec;
}

std::string format_shape(std::span<const std::int64_t> dims) {
  std::string text = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += ", ";
    text += dims[i] == dynamic_dim ? std::string("?") : std::to_string(dims[i]);
  }
  return text + "]";
}

std::string list_names(const std::vector<tensor_spec>& io, tensor_role role) {
  std::string text;
  for (const auto& t : io) {
    if (t.role != role) continue;
    if (!text.empty()) text += ", ";
    text += '\'' + t.name + '\'';
  }
  return text;
}

void check_bindings(std::string_view engine_name, const std::vector<tensor_spec>& io,
                    std::span<const shape_binding> bindings) {
  const std::string engine(engine_name);
  for (std::size_t b = 0; b < bindings.size(); ++b) {
    const shape_binding& binding = bindings[b];
    const tensor_spec* declared = nullptr;
    for (const auto& t : io)
      if (t.role == tensor_role::input && t.name == binding.name) declared = &t;
    if (declared == nullptr)
      throw invalid_argument(engine + ": no input named '" + binding.name + "'; inputs are " +
                             list_names(io, tensor_role::input));
    for (std::size_t earlier = 0; earlier < b; ++earlier)
      if (bindings[earlier].name == binding.name)
        throw invalid_argument(engine + ": input '" + binding.name + "' is given twice");

    const std::string given = format_shape(binding.dims);
    const std::string wanted = format_shape(declared->shape);
    if (binding.dims.size() != declared->shape.size())
      throw invalid_argument(engine + ": input '" + binding.name + "' has rank " +
                             std::to_string(declared->shape.size()) + " " + wanted + ", got " + given);
    for (std::size_t d = 0; d < binding.dims.size(); ++d) {
      if (binding.dims[d] <= 0)
        throw invalid_argument(engine + ": input '" + binding.name + "' needs positive extents, got " + given);
      if (declared->shape[d] != dynamic_dim && declared->shape[d] != binding.dims[d])
        throw invalid_argument(engine + ": input '" + binding.name + "' must have shape " + wanted + ", got " + given);
    }
  }
}

const shape_binding* find_binding(std::span<const shape_binding> bindings, std::string_view name) {
  for (const auto& binding : bindings)
    if (binding.name == name) return &binding;
  return nullptr;
}

std::vector<shape_binding> input_shapes_of(const std::vector<tensor_spec>& concrete_io) {
  std::vector<shape_binding> shapes;
  for (const auto& t : concrete_io)
    if (t.role == tensor_role::input) shapes.push_back({t.name, t.shape});
  return shapes;
}

void require_same_io(std::string_view engine_name, const std::vector<tensor_spec>& expected,
                     const std::vector<tensor_spec>& given) {
  const std::string engine(engine_name);
  if (expected.size() != given.size())
    throw invalid_argument(engine + ": make_context needs the " + std::to_string(expected.size()) +
                           " tensors resolve() returns, got " + std::to_string(given.size()));
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const tensor_spec& e = expected[i];
    const tensor_spec& g = given[i];
    if (e.name != g.name || e.type != g.type || e.role != g.role || e.shape != g.shape)
      throw invalid_argument(engine + ": make_context got tensor " + std::to_string(i) + " '" + g.name + "' " +
                             std::string(to_string(g.type)) + " " + format_shape(g.shape) + ", but resolve() gives '" +
                             e.name + "' " + std::string(to_string(e.type)) + " " + format_shape(e.shape) +
                             "; pass resolve()'s result unchanged");
  }
}

}  // namespace ferry::builtin
