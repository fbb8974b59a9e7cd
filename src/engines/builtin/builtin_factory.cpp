// make_builtin_engine: spec string + options -> one of the workloads in workloads.hpp, with
// every size derived and checked here so the workloads can trust their arguments.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>

#include "engines/builtin/workload_layout.hpp"
#include "engines/builtin/workload_spec.hpp"
#include "engines/builtin/workloads.hpp"
#include "ferry/core/error.hpp"
#include "ferry/engines/builtin.hpp"

namespace ferry {
namespace {

// f32 elements of the input of touch / reduce / sparse: input_bytes / 4, at least one.
std::size_t input_elements(std::string_view spec, const builtin_options& options, std::size_t minimum_bytes) {
  if (options.input_bytes < minimum_bytes)
    throw invalid_argument("builtin workload '" + std::string(spec) + "' needs input_bytes >= " +
                           std::to_string(minimum_bytes) + ", got " + std::to_string(options.input_bytes));
  return options.input_bytes / sizeof(float);
}

}  // namespace

void validate_builtin_spec(std::string_view spec) { (void)builtin::parse_workload_spec(spec); }

std::size_t builtin_weight_bytes(std::string_view spec) {
  const builtin::workload_spec parsed = builtin::parse_workload_spec(spec);
  const auto* mlp = std::get_if<builtin::mlp_spec>(&parsed);
  if (mlp == nullptr) return 0;
  const auto width = static_cast<std::size_t>(mlp->width);
  return static_cast<std::size_t>(mlp->layers) * width * width * 2;  // fp16; the spec bounds them
}

std::unique_ptr<host_reference_engine> make_builtin_engine(std::string_view spec, const builtin_options& options) {
  const builtin::workload_spec parsed = builtin::parse_workload_spec(spec);
  return std::visit(
      [&](const auto& workload) -> std::unique_ptr<host_reference_engine> {
        using kind = std::decay_t<decltype(workload)>;
        if constexpr (std::is_same_v<kind, builtin::touch_spec>) {
          return builtin::make_touch_engine(input_elements(spec, options, sizeof(float)));
        } else if constexpr (std::is_same_v<kind, builtin::reduce_spec>) {
          return builtin::make_reduce_engine(input_elements(spec, options, sizeof(float)), workload.passes);
        } else if constexpr (std::is_same_v<kind, builtin::sparse_spec>) {
          constexpr std::size_t page_bytes = builtin::page_floats * sizeof(float);
          const std::size_t elements = input_elements(spec, options, page_bytes);
          const std::size_t pages = elements / builtin::page_floats;  // a partial last page is unused
          if (pages > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
            throw invalid_argument("builtin workload '" + std::string(spec) +
                                   "': the table has more pages than int32 indices can address");
          const auto rows = std::max<std::int64_t>(1, std::llround(workload.fraction * static_cast<double>(pages)));
          return builtin::make_sparse_engine(std::string(spec), elements, rows);
        } else {
          if (options.batch < 1 || options.batch > std::numeric_limits<std::int32_t>::max())
            throw invalid_argument("builtin workload '" + std::string(spec) + "': batch must be in [1, 2^31), got " +
                                   std::to_string(options.batch));
          return builtin::make_mlp_engine(std::string(spec), workload.layers, workload.width, options.batch);
        }
      },
      parsed);
}

}  // namespace ferry
