// A model file's I/O, as written down at export time (ferry.io/1 JSON): tensor names, dtypes, and
// shapes whose dynamic dims are named symbols with ranges ("batch" in [1, 64]). Outputs reuse the
// inputs' symbols, which is how resolve() derives concrete output shapes without running the
// model. Pure logic: no engine library needed, so CPU tests cover it.
//
//   {"format": "ferry.io/1", "name": "resnet50",
//    "exported_with": {"torch": "2.11.0", "cuda_arch": "sm_90"},
//    "symbols": {"batch": {"min": 1, "max": 64}},
//    "inputs":  [{"name": "images", "dtype": "float16", "shape": ["batch", 3, 224, 224]}],
//    "outputs": [{"name": "logits", "dtype": "float16", "shape": ["batch", 1000]}]}
//
// Integer inputs that index a table (token ids) carry "index_bound": N, so benchmarks draw fresh
// inputs in [0, N) instead of indices the model would fault on.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/engines/engine.hpp"

namespace ferry {

struct symbol_range {
  std::int64_t min = 1;
  std::int64_t max = 1;
};

struct io_description {
  std::string name;
  std::string exported_with_torch;  // "" when not recorded
  std::string cuda_arch;            // "sm_90"; "" when not recorded
  std::map<std::string, symbol_range> symbols;
  std::vector<tensor_spec> tensors;                   // inputs first; dynamic dims as dynamic_dim
  std::vector<std::vector<std::string>> dim_symbols;  // per tensor, per dim: symbol or ""
};

// Parses ferry.io/1 JSON. `origin` names where it came from, for messages. Throws
// invalid_argument naming the problem (bad JSON, unknown dtype, unknown symbol, bad range).
[[nodiscard]] io_description parse_io_description(std::string_view json_text, std::string_view origin);

// "float16", "FP16", "f16", "torch.float16" ... -> dtype; throws invalid_argument.
[[nodiscard]] dtype parse_dtype_name(std::string_view name);

// Concrete I/O for the given input shapes: each input must be bound (or fully static), ranks must
// match, static dims must equal, each symbol takes one value across all inputs inside its range.
// Outputs get the symbols' values. Throws invalid_argument naming the tensor and the dim.
[[nodiscard]] std::vector<tensor_spec> resolve_io(const io_description& d, std::span<const shape_binding> inputs);

}  // namespace ferry
