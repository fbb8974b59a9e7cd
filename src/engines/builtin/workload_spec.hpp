// The grammar of built-in workload specs ("touch", "reduce", "reduce:4", "sparse:0.1", "mlp:4x4096"), parsed
// into plain values so the factory never handles strings.
#pragma once

#include <string_view>
#include <variant>

namespace ferry::builtin {

struct touch_spec {};
struct reduce_spec {
  int passes = 1;  // reads of the input per request ("reduce:4"): a kernel that re-reads its input
};
struct sparse_spec {
  double fraction = 1.0;  // share of the table's pages looked up per request, in (0, 1]
};
struct mlp_spec {
  int layers = 1;
  int width = 1;
};

using workload_spec = std::variant<touch_spec, reduce_spec, sparse_spec, mlp_spec>;

// Whether `kind` (a spec's part before ':') names a built-in workload; other "NAME:PATH" specs
// name a backend plugin.
[[nodiscard]] bool is_builtin_kind(std::string_view kind) noexcept;

// Throws invalid_argument naming what is wrong and what the grammar is.
[[nodiscard]] workload_spec parse_workload_spec(std::string_view spec);

}  // namespace ferry::builtin
