#include "ferry/engines/model_engine.hpp"

#include <charconv>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "engines/builtin/workload_spec.hpp"
#include "engines/plugin/backend_library.hpp"
#include "engines/plugin/backend_search.hpp"
#include "engines/plugin/plugin_engine.hpp"
#include "ferry/core/error.hpp"
#include "ferry/engines/backend.hpp"

namespace ferry {
namespace {

bool is_backend_name(std::string_view name) noexcept {
  if (name.empty()) return false;
  for (const char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

struct backend_spec {
  std::string backend;
  std::string path;
};

backend_spec split(std::string_view spec) {
  if (!is_model_engine_spec(spec))
    throw invalid_argument(
        fmt::format("engine '{}' is not a model file spec (expected BACKEND:PATH, e.g. "
                    "torch:model.pt2 or trt:model.plan)",
                    spec));
  const auto colon = spec.find(':');
  backend_spec parts{std::string(spec.substr(0, colon)), std::string(spec.substr(colon + 1))};
  if (parts.path.empty())
    throw invalid_argument(fmt::format("engine '{}': no model file after '{}:'", spec, parts.backend));
  return parts;
}

// The backend of `spec`, opened; its refusal names the spec, so the model file is in the message.
std::shared_ptr<const plugin::backend_library> open_backend(std::string_view spec, const std::string& name,
                                                            const model_engine_options& options) {
  try {
    const auto directories = options.backend_directories.empty() ? backend_directories() : options.backend_directories;
    auto library = plugin::backend_library::open(plugin::find_backend(name, directories));
    if (library->name() != name)
      throw unsupported(fmt::format("backend file '{}' calls itself '{}', not '{}'", library->file().string(),
                                    library->name(), name));
    return library;
  } catch (const unsupported& e) {
    throw unsupported(fmt::format("engine '{}': {}", spec, e.what()));
  }
}

}  // namespace

index_bound_override parse_index_bound(std::string_view text) {
  const auto equals = text.rfind('=');
  const auto bad = [&] {
    return invalid_argument(
        fmt::format("bad index bound '{}': expected INPUT=N with N >= 1, e.g. input_ids=30522", text));
  };
  if (equals == std::string_view::npos || equals == 0 || equals + 1 == text.size()) throw bad();
  index_bound_override o{std::string(text.substr(0, equals)), 0};
  const auto digits = text.substr(equals + 1);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), o.bound);
  if (ec != std::errc() || end != digits.data() + digits.size() || o.bound < 1) throw bad();
  return o;
}

bool is_model_engine_spec(std::string_view spec) noexcept {
  const auto colon = spec.find(':');
  if (colon == std::string_view::npos) return false;
  const auto name = spec.substr(0, colon);
  return is_backend_name(name) && !builtin::is_builtin_kind(name);
}

void check_model_engine_spec(std::string_view spec) {
  const auto [backend, path] = split(spec);
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return;
  const auto where = std::filesystem::path(path).is_relative()
                         ? fmt::format(" (relative to {})", std::filesystem::current_path(ec).string())
                         : std::string();
  throw invalid_argument(fmt::format("engine '{}': the model file '{}' does not exist{}", spec, path, where));
}

std::unique_ptr<engine> load_model_engine(std::string_view spec, const model_engine_options& options) {
  auto [backend, path] = split(spec);
  return plugin::load_plugin_engine(open_backend(spec, backend, options), path, options);
}

std::unique_ptr<host_reference_engine> load_model_engine_on_host(std::string_view spec, model_engine_options options) {
  auto [backend, path] = split(spec);
  auto library = open_backend(spec, backend, options);
  if (!library->computes_on_host())
    throw unsupported(fmt::format("engine '{}' needs a GPU: backend '{}' cannot compute on the CPU", spec, backend));
  options.device = -1;
  return plugin::load_plugin_engine(std::move(library), path, options);
}

}  // namespace ferry
