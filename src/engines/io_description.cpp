#include "engines/io_description.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ferry/core/error.hpp"

namespace ferry {
namespace {

using nlohmann::json;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string shape_text(const std::vector<std::int64_t>& dims) {
  std::vector<std::string> parts;
  for (auto d : dims) parts.push_back(d == dynamic_dim ? "?" : std::to_string(d));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

// An integer field as written. The JSON library's own conversion would truncate a fraction
// (2.5 -> 2), wrap an unsigned value beyond int64 to a negative one, and convert a number beyond
// int64 (1e30) with undefined behaviour; each is refused here, naming `what`.
std::int64_t integer(const json& v, const std::string& what) {
  const bool fits = v.is_number_integer() &&
                    !(v.is_number_unsigned() &&
                      v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
  if (!fits)
    throw invalid_argument(fmt::format("{} must be an integer in int64's range, got {}", what,
                                       v.is_number() ? v.dump() : fmt::format("a JSON {}", v.type_name())));
  return v.get<std::int64_t>();
}

void read_tensors(const json& list, tensor_role role, const std::string& origin, io_description& d) {
  if (!list.is_array() || list.empty())
    throw invalid_argument(fmt::format("{}: '{}' must be a non-empty list of tensors", origin,
                                       role == tensor_role::input ? "inputs" : "outputs"));
  for (const auto& t : list) {
    tensor_spec spec;
    spec.role = role;
    spec.name = t.at("name").get<std::string>();
    spec.type = parse_dtype_name(t.at("dtype").get<std::string>());
    if (t.contains("index_bound")) {
      spec.index_bound = integer(t["index_bound"], fmt::format("{}: tensor '{}': index_bound", origin, spec.name));
      if (*spec.index_bound < 1 || (spec.type != dtype::i32 && spec.type != dtype::i64))
        throw invalid_argument(fmt::format("{}: tensor '{}': index_bound needs an int32/int64 tensor and a bound >= 1",
                                           origin, spec.name));
    }
    std::vector<std::string> symbols;
    for (const auto& dim : t.at("shape")) {
      if (dim.is_string()) {
        const auto symbol = dim.get<std::string>();
        if (!d.symbols.contains(symbol))
          throw invalid_argument(fmt::format("{}: tensor '{}' uses symbol '{}', which 'symbols' does not define",
                                             origin, spec.name, symbol));
        spec.shape.push_back(dynamic_dim);
        symbols.push_back(symbol);
      } else {
        const auto extent = integer(dim, fmt::format("{}: tensor '{}': dim {}", origin, spec.name, symbols.size()));
        if (extent <= 0)
          throw invalid_argument(fmt::format("{}: tensor '{}' has a non-positive dim {}", origin, spec.name, extent));
        spec.shape.push_back(extent);
        symbols.emplace_back();
      }
    }
    d.tensors.push_back(std::move(spec));
    d.dim_symbols.push_back(std::move(symbols));
  }
}

}  // namespace

dtype parse_dtype_name(std::string_view name) {
  std::string n = lower(name);
  if (n.starts_with("torch.")) n.erase(0, 6);
  if (n == "float16" || n == "fp16" || n == "f16" || n == "half") return dtype::f16;
  if (n == "float32" || n == "fp32" || n == "f32" || n == "float") return dtype::f32;
  if (n == "bfloat16" || n == "bf16") return dtype::bf16;
  if (n == "int8" || n == "i8") return dtype::i8;
  if (n == "uint8" || n == "u8") return dtype::u8;
  if (n == "int32" || n == "i32") return dtype::i32;
  if (n == "int64" || n == "i64" || n == "long") return dtype::i64;
  if (n == "bool" || n == "boolean") return dtype::boolean;
  throw invalid_argument("unsupported dtype '" + std::string(name) +
                         "' (ferry handles float16, bfloat16, float32, int8, uint8, int32, int64, bool)");
}

io_description parse_io_description(std::string_view json_text, std::string_view origin_view) {
  const std::string origin(origin_view);
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::exception& e) {
    throw invalid_argument(origin + ": not valid JSON (" + e.what() + ")");
  }
  try {
    if (doc.value("format", "") != "ferry.io/1")
      throw invalid_argument(origin + ": not a ferry.io/1 description (\"format\" is missing or different)");
    io_description d;
    d.name = doc.value("name", "model");
    if (doc.contains("exported_with")) {
      d.exported_with_torch = doc["exported_with"].value("torch", "");
      d.cuda_arch = doc["exported_with"].value("cuda_arch", "");
    }
    const json symbols = doc.value("symbols", json::object());  // named: items() must not outlive it
    for (const auto& [symbol, range] : symbols.items()) {
      const std::string where = fmt::format("{}: symbol '{}': ", origin, symbol);
      symbol_range r{integer(range.at("min"), where + "min"), integer(range.at("max"), where + "max")};
      if (r.min < 1 || r.max < r.min)
        throw invalid_argument(fmt::format("{}: symbol '{}' has a bad range [{}, {}]", origin, symbol, r.min, r.max));
      d.symbols[symbol] = r;
    }
    read_tensors(doc.at("inputs"), tensor_role::input, origin, d);
    read_tensors(doc.at("outputs"), tensor_role::output, origin, d);
    return d;
  } catch (const json::exception& e) {
    throw invalid_argument(origin + ": malformed I/O description (" + e.what() + ")");
  }
}

std::vector<tensor_spec> resolve_io(const io_description& d, std::span<const shape_binding> inputs) {
  for (const auto& b : inputs) {
    const bool known = std::any_of(d.tensors.begin(), d.tensors.end(), [&](const tensor_spec& t) {
      return t.role == tensor_role::input && t.name == b.name;
    });
    if (!known) {
      std::vector<std::string> names;
      for (const auto& t : d.tensors)
        if (t.role == tensor_role::input) names.push_back(t.name);
      throw invalid_argument(
          fmt::format("unknown input tensor '{}'; {} takes: {}", b.name, d.name, fmt::join(names, ", ")));
    }
  }
  std::map<std::string, std::int64_t> values;
  std::vector<tensor_spec> out = d.tensors;
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto& t = out[i];
    if (t.role != tensor_role::input) continue;
    const auto bound =
        std::find_if(inputs.begin(), inputs.end(), [&](const shape_binding& b) { return b.name == t.name; });
    if (bound == inputs.end()) {
      if (t.is_dynamic())
        throw invalid_argument(
            fmt::format("input '{}' has dynamic dims {}; give its shape", t.name, shape_text(t.shape)));
      continue;
    }
    if (bound->dims.size() != t.shape.size())
      throw invalid_argument(fmt::format("input '{}' has rank {} {}, not {} {}", t.name, t.shape.size(),
                                         shape_text(t.shape), bound->dims.size(), shape_text(bound->dims)));
    for (std::size_t k = 0; k < t.shape.size(); ++k) {
      const std::int64_t want = bound->dims[k];
      const std::string& symbol = d.dim_symbols[i][k];
      if (symbol.empty()) {
        if (want != t.shape[k])
          throw invalid_argument(fmt::format("input '{}' dim {} is fixed at {}, not {}", t.name, k, t.shape[k], want));
        continue;
      }
      const auto range = d.symbols.at(symbol);
      if (want < range.min || want > range.max)
        throw invalid_argument(fmt::format("input '{}' dim {} ('{}') is {}, outside the exported range [{}, {}]",
                                           t.name, k, symbol, want, range.min, range.max));
      const auto [it, fresh] = values.emplace(symbol, want);
      if (!fresh && it->second != want)
        throw invalid_argument(fmt::format("input '{}' dim {} ('{}') is {}, but another input set '{}' to {}", t.name,
                                           k, symbol, want, symbol, it->second));
      t.shape[k] = want;
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto& t = out[i];
    if (t.role != tensor_role::output) continue;
    for (std::size_t k = 0; k < t.shape.size(); ++k) {
      const std::string& symbol = d.dim_symbols[i][k];
      if (symbol.empty()) continue;
      const auto it = values.find(symbol);
      if (it == values.end())
        throw invalid_argument(
            fmt::format("output '{}' dim {} depends on '{}', which no input sets", t.name, k, symbol));
      t.shape[k] = it->second;
    }
  }
  return out;
}

}  // namespace ferry
