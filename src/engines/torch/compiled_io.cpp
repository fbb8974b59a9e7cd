#include "engines/torch/compiled_io.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ferry/core/error.hpp"

namespace ferry::aoti {
namespace {

// What the checks say about one dim of one input.
struct dim_facts {
  std::optional<std::int64_t> extent;  // static
  std::optional<std::int64_t> below;   // size < below is refused
  std::optional<std::int64_t> above;   // size > above is refused
  std::string symbol;
};

struct input_facts {
  std::string name;
  std::string dtype_name;
  std::map<std::size_t, dim_facts> dims;
};

std::int64_t number(const std::string& text) { return std::stoll(text); }

// The generated file can be megabytes long: regexes run on the few lines that can match.
std::vector<std::string_view> candidate_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const auto line = text.substr(start, end - start);
    if (line.find("inputs_info_[") != std::string_view::npos || line.find("_size[") != std::string_view::npos ||
        line.find("_expected_dtype") != std::string_view::npos)
      lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

std::map<std::string, input_facts> read_facts(std::string_view text, std::vector<std::string>& order) {
  static const std::regex name_line(R"re(inputs_info_\[(\d+)\]\.name\s*=\s*"([^"]+)")re");
  static const std::regex dtype_line(R"re(\b(\w+)_expected_dtype\s*=\s*aoti_torch_dtype_(\w+)\(\))re");
  static const std::regex static_line(R"re(if\s*\((\d+)\s*!=\s*(\w+)_size\[(\d+)\]\))re");
  static const std::regex lower_line(R"re(if\s*\((\w+)_size\[(\d+)\]\s*<\s*(\d+)\))re");
  static const std::regex upper_line(R"re(if\s*\((\w+)_size\[(\d+)\]\s*>\s*(\d+)\))re");
  static const std::regex symbol_line(R"re(int64_t\s+(\w+)\s*=\s*(\w+)_size\[(\d+)\]\s*;)re");

  const auto lines = candidate_lines(text);
  std::map<std::size_t, std::string> by_index;
  std::match_results<std::string_view::const_iterator> m;
  for (const auto line : lines)
    if (std::regex_search(line.begin(), line.end(), m, name_line)) by_index[std::stoul(m[1].str())] = m[2].str();
  std::map<std::string, input_facts> inputs;
  for (const auto& [index, name] : by_index) {
    order.push_back(name);
    inputs[name].name = name;
  }
  // A check names an input; constants and outputs have sizes too, and are not inputs.
  auto dim_of = [&](const std::string& tensor, const std::string& dim) -> dim_facts* {
    const auto it = inputs.find(tensor);
    return it == inputs.end() ? nullptr : &it->second.dims[std::stoul(dim)];
  };
  for (const auto line : lines) {
    const auto b = line.begin(), e = line.end();
    if (std::regex_search(b, e, m, dtype_line)) {
      if (auto it = inputs.find(m[1].str()); it != inputs.end()) it->second.dtype_name = m[2].str();
    } else if (std::regex_search(b, e, m, static_line)) {
      if (auto* d = dim_of(m[2].str(), m[3].str())) d->extent = number(m[1].str());
    } else if (std::regex_search(b, e, m, lower_line)) {
      if (auto* d = dim_of(m[1].str(), m[2].str())) d->below = number(m[3].str());
    } else if (std::regex_search(b, e, m, upper_line)) {
      if (auto* d = dim_of(m[1].str(), m[2].str())) d->above = number(m[3].str());
    } else if (std::regex_search(b, e, m, symbol_line)) {
      // `int64_t x_size_0 = x_size[0];` comes before solving an expression of a symbol: no symbol.
      const bool expression = m[1].str() == m[2].str() + "_size_" + m[3].str();
      if (expression) continue;
      if (auto* d = dim_of(m[2].str(), m[3].str())) d->symbol = m[1].str();
    }
  }
  return inputs;
}

symbol_range range_of(const dim_facts& dim) {
  return {dim.below.value_or(1), dim.above.value_or(std::numeric_limits<std::int64_t>::max())};
}

std::string origin_of(std::string_view origin) { return fmt::format("model file '{}'", origin); }

// AOTInductor writes `int64_t s31 = x_size[0];` where a symbol first appears, and nothing where it
// appears again: a dynamic dim without its own line has a symbol defined elsewhere. The one whose
// bounds are the same is it; with none or several, the package does not say, and ferry will not
// guess (a wrong guess would run the model on inputs of mismatched sizes).
std::string symbol_of(const input_facts& input, std::size_t k, const dim_facts& dim,
                      const std::map<std::string, symbol_range>& defined, std::string_view origin) {
  if (!dim.symbol.empty()) return dim.symbol;
  const auto range = range_of(dim);
  std::vector<std::string> same;
  for (const auto& [symbol, r] : defined)
    if (r.min == range.min && r.max == range.max) same.push_back(symbol);
  if (same.size() == 1) return same.front();
  throw invalid_argument(
      fmt::format("{}: input '{}' dim {} is dynamic, and its generated code does not say which "
                  "dim it shares its extent with ({} candidates)",
                  origin_of(origin), input.name, k, same.size()));
}

}  // namespace

compiled_io parse_compiled_io(std::string_view wrapper_cpp, std::string_view origin) {
  std::vector<std::string> order;
  const auto facts = read_facts(wrapper_cpp, order);
  if (order.empty())
    throw invalid_argument(
        fmt::format("{}: its generated code names no inputs (no inputs_info_ entries)", origin_of(origin)));
  compiled_io io;
  for (const auto& [name, input] : facts)
    for (const auto& [k, dim] : input.dims)
      if (!dim.symbol.empty() && !dim.extent) io.symbols.emplace(dim.symbol, range_of(dim));
  for (const auto& name : order) {
    const auto& input = facts.at(name);
    if (input.dtype_name.empty())
      throw invalid_argument(
          fmt::format("{}: its generated code does not check input '{}''s dtype (were the input "
                      "checks left out of the build?)",
                      origin_of(origin), name));
    tensor_spec spec;
    spec.name = name;
    spec.role = tensor_role::input;
    try {
      spec.type = parse_dtype_name(input.dtype_name);
    } catch (const invalid_argument& e) {
      throw invalid_argument(fmt::format("{}: input '{}': {}", origin_of(origin), name, e.what()));
    }
    const std::size_t rank = input.dims.empty() ? 0 : input.dims.rbegin()->first + 1;
    std::vector<std::string> symbols(rank);
    for (std::size_t k = 0; k < rank; ++k) {
      const auto it = input.dims.find(k);
      if (it == input.dims.end() ||
          (!it->second.extent && !it->second.below && !it->second.above && it->second.symbol.empty()))
        throw invalid_argument(
            fmt::format("{}: its generated code checks input '{}' dim {} neither as static nor "
                        "as dynamic",
                        origin_of(origin), name, k));
      const auto& dim = it->second;
      if (dim.extent) {
        spec.shape.push_back(*dim.extent);
        continue;
      }
      symbols[k] = symbol_of(input, k, dim, io.symbols, origin);
      spec.shape.push_back(dynamic_dim);
    }
    io.inputs.push_back(std::move(spec));
    io.dim_symbols.push_back(std::move(symbols));
  }
  return io;
}

std::vector<symbol_values> probe_values(const compiled_io& io) {
  std::vector<symbol_values> runs(2);
  std::set<std::int64_t> taken[2];
  for (const auto& [symbol, range] : io.symbols) {
    for (int run = 0; run < 2; ++run) {
      std::int64_t v = range.min;
      const bool one_value = range.min == range.max;
      while (v <= range.max && !one_value && (taken[run].contains(v) || (run == 1 && v == runs[0].at(symbol)))) ++v;
      if (v > range.max)
        throw invalid_argument(
            fmt::format("symbol '{}' (range [{}, {}]) leaves no probe value apart from the other "
                        "symbols'",
                        symbol, range.min, range.max));
      runs[run][symbol] = v;
      taken[run].insert(v);
    }
  }
  return runs;
}

std::vector<shape_binding> probe_shapes(const compiled_io& io, const symbol_values& values) {
  std::vector<shape_binding> shapes;
  for (std::size_t i = 0; i < io.inputs.size(); ++i) {
    shape_binding b{io.inputs[i].name, io.inputs[i].shape};
    for (std::size_t k = 0; k < b.dims.size(); ++k)
      if (!io.dim_symbols[i][k].empty()) b.dims[k] = values.at(io.dim_symbols[i][k]);
    shapes.push_back(std::move(b));
  }
  return shapes;
}

io_description describe_compiled(std::string name, const compiled_io& io, std::span<const probe_run> runs) {
  if (runs.size() != 2) throw invalid_argument("describing a package needs two probe runs");
  const auto& first = runs[0];
  const auto& second = runs[1];
  if (first.outputs.size() != second.outputs.size() || first.outputs.empty())
    throw invalid_argument(fmt::format("the package returned {} and then {} outputs on two runs", first.outputs.size(),
                                       second.outputs.size()));
  io_description d;
  d.name = std::move(name);
  d.symbols = io.symbols;
  d.tensors = io.inputs;
  d.dim_symbols = io.dim_symbols;
  for (std::size_t o = 0; o < first.outputs.size(); ++o) {
    const auto& a = first.outputs[o];
    const auto& b = second.outputs[o];
    const auto output = fmt::format("output{}", o);
    if (a.type != b.type || a.shape.size() != b.shape.size())
      throw invalid_argument(fmt::format("{} changed its dtype or rank between two runs", output));
    tensor_spec spec{.name = output, .type = a.type, .shape = {}, .role = tensor_role::output, .index_bound = {}};
    std::vector<std::string> symbols(a.shape.size());
    for (std::size_t k = 0; k < a.shape.size(); ++k) {
      for (const auto& [symbol, v] : first.values)
        if (a.shape[k] == v && b.shape[k] == second.values.at(symbol) && v != second.values.at(symbol)) {
          symbols[k] = symbol;
          break;
        }
      if (!symbols[k].empty()) {
        spec.shape.push_back(dynamic_dim);
      } else if (a.shape[k] == b.shape[k]) {
        spec.shape.push_back(a.shape[k]);
      } else {
        std::vector<std::string> tried;
        for (const auto& [symbol, v] : first.values)
          tried.push_back(fmt::format("{} = {} then {}", symbol, v, second.values.at(symbol)));
        throw invalid_argument(
            fmt::format("{} dim {} was {} and then {} with {}: it follows no one input dim, which "
                        "ferry.io/1 cannot describe",
                        output, k, a.shape[k], b.shape[k], fmt::join(tried, ", ")));
      }
    }
    d.tensors.push_back(std::move(spec));
    d.dim_symbols.push_back(std::move(symbols));
  }
  return d;
}

}  // namespace ferry::aoti
