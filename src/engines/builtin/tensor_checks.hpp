// Shape checks shared by the built-in engines' resolve() and make_context(), so every engine
// rejects the same mistakes with the same kind of message: which engine, which tensor, what
// was expected, what was given.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/engines/engine.hpp"

namespace ferry::builtin {

// A tensor_spec with every field given (index_bound unset unless passed).
[[nodiscard]] tensor_spec make_tensor(std::string name, dtype type, std::vector<std::int64_t> shape, tensor_role role,
                                      std::optional<std::int64_t> index_bound = std::nullopt);

// "[16, 3, 224, 224]", with "?" for a dynamic dim.
[[nodiscard]] std::string format_shape(std::span<const std::int64_t> dims);

// Names of the tensors of `io` with `role`, quoted and comma-separated, for messages.
[[nodiscard]] std::string list_names(const std::vector<tensor_spec>& io, tensor_role role);

// Checks every binding against the declared `io`: the name is a declared input (given once),
// the rank matches, every extent is positive and every static dim is equal. Throws
// invalid_argument naming the engine and the tensor otherwise.
void check_bindings(std::string_view engine_name, const std::vector<tensor_spec>& io,
                    std::span<const shape_binding> bindings);

// The binding for `name`, or nullptr when none was given.
[[nodiscard]] const shape_binding* find_binding(std::span<const shape_binding> bindings, std::string_view name);

// The input shapes of a concrete I/O, as the bindings that would resolve to it.
[[nodiscard]] std::vector<shape_binding> input_shapes_of(const std::vector<tensor_spec>& concrete_io);

// make_context's check that `given` is what resolve() gives for its own input shapes
// (`expected`): same tensors in the same order, same dtypes, roles and concrete shapes.
void require_same_io(std::string_view engine_name, const std::vector<tensor_spec>& expected,
                     const std::vector<tensor_spec>& given);

}  // namespace ferry::builtin
