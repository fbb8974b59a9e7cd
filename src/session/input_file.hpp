// Inputs' values read from a user's file, for ferry/session/input_data.hpp. Internal to src/session.
//
// JSON, as perf_analyzer's --input-data reads it: {"data": [SAMPLE, ...]} or one SAMPLE, where a
// SAMPLE maps input names to values, each a (flat or nested) array of numbers or booleans, or
// {"content": ARRAY, "shape": [DIMS]}. The numbers take the input's dtype once the engine is
// known (bind_values), range-checked.
// NumPy's .npz (np.savez, np.savez_compressed): one array per input, named as the input, of the
// input's shape (one sample) or with one more leading dim (that many samples); little-endian
// numeric dtypes and bool, C order. Read with libzip.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferry/engines/engine.hpp"

namespace ferry::detail {

struct given_input {
  std::string name;
  // .npz: the array's dtype. JSON: unset until bound to an engine's input.
  std::optional<dtype> type;
  // The array's shape (.npz: every sample together), or the one a JSON sample gives by nesting or
  // "shape"; unset for a flat JSON array, whose element count is checked instead.
  std::optional<std::vector<std::int64_t>> shape;
  // Typed bytes, row-major: .npz's one array (split into samples when bound), a bound input's samples.
  std::vector<std::vector<std::byte>> samples;
  // JSON: each sample's values, flattened, until bound.
  std::vector<nlohmann::json> values;
};

// Reads `path` by its extension (.json, .npz). Throws invalid_argument naming the file and the
// problem.
[[nodiscard]] std::vector<given_input> read_input_file(const std::filesystem::path& path);

// The file's values of one input made ready for `spec` (its concrete shape and dtype): JSON
// numbers encoded, .npz samples split and checked. Throws invalid_argument naming `file`, the
// input and the problem (a wrong dtype, shape or count, a value the dtype cannot hold).
[[nodiscard]] given_input bind_values(const given_input& given, const tensor_spec& spec, const std::string& file);

}  // namespace ferry::detail
