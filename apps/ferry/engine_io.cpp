#include "engine_io.hpp"

#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ferry/device/device_caps.hpp"
#include "ferry/engines/backend.hpp"
#include "ferry/engines/builtin.hpp"
#include "ferry/engines/model_engine.hpp"

namespace ferry::cli {
namespace {

std::string dims_text(const tensor_spec& t) {
  std::string text;
  for (const auto d : t.shape)
    text += (text.empty() ? "" : ", ") + (d == dynamic_dim ? std::string("?") : std::to_string(d));
  return "[" + text + "]";
}

bool is_index_type(dtype t) { return t == dtype::i32 || t == dtype::i64; }

std::string bound_text(const tensor_spec& t) {
  if (t.role != tensor_role::input || !is_index_type(t.type)) return "";
  if (t.index_bound)
    return fmt::format("index bound {}: values in [0, {}), checked before the engine", *t.index_bound, *t.index_bound);
  return fmt::format(
      "no index bound: ferry gives it zeros, --input-data random refuses it; give one with "
      "--index-bound {}=N (serve: \"index_bounds\")",
      t.name);
}

}  // namespace

void print_engine_io(const std::string& spec, const std::filesystem::path& backend_directory, bool json) {
  std::unique_ptr<engine> loaded;
  std::string where = "built in";
  if (is_model_engine_spec(spec)) {
    const model_engine_options options{.backend_directories = backend_directories(backend_directory)};
    if (cuda_device_count() > 0) {
      loaded = load_model_engine(spec, options);
      where = "loaded on GPU 0";
    } else {
      loaded = load_model_engine_on_host(spec, options);
      where = "loaded for the CPU (no GPU here)";
    }
  } else {
    loaded = make_builtin_engine(spec, {});
  }
  if (json) {
    nlohmann::json tensors = nlohmann::json::array();
    for (const auto& t : loaded->io()) {
      nlohmann::json entry = {{"name", t.name},
                              {"role", t.role == tensor_role::input ? "input" : "output"},
                              {"datatype", std::string(to_string(t.type))},
                              {"shape", t.shape}};
      if (t.role == tensor_role::input && is_index_type(t.type))
        entry["index_bound"] = t.index_bound ? nlohmann::json(*t.index_bound) : nlohmann::json(nullptr);
      tensors.push_back(std::move(entry));
    }
    fmt::print("{}\n", nlohmann::json{{"engine", spec}, {"name", loaded->name()}, {"tensors", tensors}}.dump(2));
    return;
  }
  fmt::print("{} ({}, {}); ? is a dim given at run time:\n", loaded->name(), spec, where);
  for (const auto& t : loaded->io()) {
    const std::string bound = bound_text(t);
    fmt::print("  {:<6} {:<24} {:<5} {}{}\n", t.role == tensor_role::input ? "input" : "output", t.name,
               to_string(t.type), dims_text(t), bound.empty() ? "" : "  " + bound);
  }
  std::fflush(stdout);
}

}  // namespace ferry::cli
