#include "engines/builtin/workload_spec.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>

#include "ferry/core/error.hpp"

namespace ferry::builtin {
namespace {

constexpr std::string_view forms =
    "touch, reduce, reduce:<passes in [1,64]>, sparse:<fraction in (0,1]> or mlp:<layers>x<width> (e.g. mlp:4x4096)";

// Limits that keep cuBLAS's int dimensions and the weights' memory (layers * width^2 * 2 bytes,
// on the host and on the device) sane: 64 layers of 16384 wide is 32 GiB.
constexpr int max_layers = 64;
constexpr int max_width = 16384;
// Enough re-reads to show what zero-copy costs a kernel that reads its input several times.
constexpr int max_passes = 64;

[[noreturn]] void fail(std::string_view spec, const std::string& why) {
  throw invalid_argument("builtin workload '" + std::string(spec) + "': " + why);
}

// Whole-string parses: trailing characters are an error, not ignored.
bool parse_whole(std::string_view text, double& value) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end;
}
bool parse_whole(std::string_view text, std::int64_t& value) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end;
}

sparse_spec parse_sparse(std::string_view spec, std::string_view parameter) {
  double fraction = 0.0;
  if (!parse_whole(parameter, fraction))
    fail(spec, "the sparse fraction '" + std::string(parameter) + "' is not a number; expected " + std::string(forms));
  if (!std::isfinite(fraction) || fraction <= 0.0 || fraction > 1.0)
    fail(spec, "the sparse fraction must be in (0, 1], got " + std::string(parameter));
  return {fraction};
}

mlp_spec parse_mlp(std::string_view spec, std::string_view parameter) {
  const std::size_t x = parameter.find('x');
  std::int64_t layers = 0;
  std::int64_t width = 0;
  if (x == std::string_view::npos || !parse_whole(parameter.substr(0, x), layers) ||
      !parse_whole(parameter.substr(x + 1), width))
    fail(spec, "mlp needs <layers>x<width> as whole numbers, e.g. mlp:4x4096");
  if (layers < 1 || layers > max_layers)
    fail(spec, "mlp layers must be in [1, " + std::to_string(max_layers) + "], got " + std::to_string(layers));
  if (width < 1 || width > max_width)
    fail(spec, "mlp width must be in [1, " + std::to_string(max_width) + "], got " + std::to_string(width));
  return {static_cast<int>(layers), static_cast<int>(width)};
}

}  // namespace

bool is_builtin_kind(std::string_view kind) noexcept {
  return kind == "touch" || kind == "reduce" || kind == "sparse" || kind == "mlp";
}

workload_spec parse_workload_spec(std::string_view spec) {
  const std::size_t colon = spec.find(':');
  const std::string_view kind = spec.substr(0, colon);
  const bool has_parameter = colon != std::string_view::npos;
  const std::string_view parameter = has_parameter ? spec.substr(colon + 1) : std::string_view{};

  if (kind == "touch") {
    if (has_parameter) fail(spec, "touch takes no parameter");
    return touch_spec{};
  }
  if (kind == "reduce") {
    if (!has_parameter) return reduce_spec{};
    int passes = 0;
    const auto [end, ec] = std::from_chars(parameter.data(), parameter.data() + parameter.size(), passes);
    if (ec != std::errc{} || end != parameter.data() + parameter.size() || passes < 1 || passes > max_passes)
      fail(spec, "reduce's passes over the input must be a count in [1, " + std::to_string(max_passes) + "], got '" +
                     std::string(parameter) + "'");
    return reduce_spec{passes};
  }
  if (kind == "sparse") {
    if (!has_parameter) fail(spec, "sparse needs a fraction of pages, e.g. sparse:0.1");
    return parse_sparse(spec, parameter);
  }
  if (kind == "mlp") {
    if (!has_parameter) fail(spec, "mlp needs <layers>x<width>, e.g. mlp:4x4096");
    return parse_mlp(spec, parameter);
  }
  // Not a built-in kind, and not a model file either (no BACKEND: prefix): name both forms.
  throw invalid_argument("engine '" + std::string(spec) + "': unknown workload; expected a built-in one, " +
                         std::string(forms) + ", or a model file BACKEND:PATH (torch:model.pt2, trt:model.plan, ...)");
}

}  // namespace ferry::builtin
