// The names a package's caller gave its inputs, from the call spec AOTInductor keeps with the
// package (AOTIModelPackageLoader::get_call_spec: the pytree TreeSpec of the exported function's
// arguments, serialized as JSON). The generated code names its inputs by the graph's placeholders
// (arg73_1, arg74_1); a model called as model(input_ids=..., attention_mask=...) was exported with
// those keyword names, and users write files and flags by them. Pure logic (no libtorch).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engines/torch/compiled_io.hpp"

namespace ferry::aoti {

// One name per flattened input, in the flattened order (the package's input order): a keyword
// argument's key ("input_ids"), "key.0" for a tuple inside one, "key.name" for a dict inside one;
// "" where the caller gave no name (positional arguments). Throws invalid_argument for text that
// is no TreeSpec (the format is torch.utils._pytree's treespec_dumps: [version, node], each node
// {"type", "context", "children_spec"}, a dict's context its keys as a JSON list in a string).
[[nodiscard]] std::vector<std::string> caller_input_names(std::string_view in_spec_json);

// Renames io's inputs to the caller's names where `names` gives one (same count as the inputs,
// each non-empty and used once); otherwise leaves the package's names. Returns whether it renamed.
bool apply_caller_names(compiled_io& io, std::span<const std::string> names);

}  // namespace ferry::aoti
