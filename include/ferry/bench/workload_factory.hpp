// Turns `--engine`, `--size`, `--batch` and `--preprocess` into a bench::workload.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/bench/run_options.hpp"
#include "ferry/engines/model_engine.hpp"

namespace ferry::bench {

struct workload_request {
  std::string engine;                               // "reduce", "mlp:4x4096", "sparse:0.1", ...
  std::size_t input_bytes = std::size_t{19} << 20;  // built-ins sized by bytes (touch/reduce/sparse)
  std::int64_t batch = 16;                          // mlp, and images with --preprocess u8-normalize
  std::string preprocess;                           // "" or "u8-normalize"
  std::int64_t image_height = 224;
  std::int64_t image_width = 224;
  std::vector<shape_binding> shapes;                       // --shape overrides
  std::vector<int> devices{0};                             // model files load onto each of these GPUs
  int max_concurrency = 1;                                 // model files: contexts that run at once (slots)
  std::vector<std::filesystem::path> backend_directories;  // model files: where backends are; empty: the default
  std::vector<index_bound_override> index_bounds;          // model files: bounds of integer inputs (--index-bound)
};

// Built-in specs, or a model file ("trt:PATH.plan", "torch:PATH.pt2", loaded once and shared by
// every cell; --batch binds a model's leading dynamic dim). Throws invalid_argument naming the
// problem (unknown engine or preprocess, bad sizes, bad model file), and unsupported for engine
// kinds this build lacks.
[[nodiscard]] workload make_workload(const workload_request& request);

// "input:16x3x224x224" -> {"input", {16, 3, 224, 224}}.
[[nodiscard]] shape_binding parse_shape(std::string_view text);

}  // namespace ferry::bench
