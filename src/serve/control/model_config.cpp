#include "serve/control/model_config.hpp"

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

#include "ferry/core/byte_size.hpp"
#include "ferry/core/error.hpp"
#include "serve/codec/client_json.hpp"
#include "serve/request_error.hpp"

namespace ferry::serve {
namespace {

using json = nlohmann::json;

class config_reader {
 public:
  config_reader(const json& doc, std::string model) : doc_(doc), model_(std::move(model)) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw invalid_argument("model '" + model_ + "': " + std::string(model_config_file) + ": " + problem);
  }

  [[nodiscard]] const json* find(const char* key) const {
    const auto it = doc_.find(key);
    return it == doc_.end() ? nullptr : &*it;
  }

  [[nodiscard]] std::string text(const char* key) const {
    const json& v = *find(key);
    if (!v.is_string()) fail(std::string("'") + key + "' must be a string, got " + quote_json(v));
    return v.get<std::string>();
  }

  [[nodiscard]] std::int64_t integer(const char* key, std::int64_t lo, std::int64_t hi) const {
    const json& v = *find(key);
    if (!v.is_number_integer()) fail(std::string("'") + key + "' must be an integer, got " + quote_json(v));
    // An unsigned value past int64's range would read back negative: name it as written.
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      fail(std::string("'") + key + "' must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
           quote_json(v));
    const auto n = v.get<std::int64_t>();
    if (n < lo || n > hi)
      fail(std::string("'") + key + "' must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
           std::to_string(n));
    return n;
  }

 private:
  const json& doc_;
  std::string model_;
};

// Builds the document with the client JSON's bounds (nesting, values, repeated keys); a syntax
// error is named by its offset only, since the library's message quotes the text it stopped at,
// and a file that is not JSON at all (a link to another file) must not be shown.
class config_document_builder : public json_document_builder {
 public:
  config_document_builder(json& root, std::string model) : json_document_builder(root, ""), model_(std::move(model)) {}

  [[noreturn]] bool parse_error(std::size_t position, const std::string&, const json::exception& problem) {
    const bool number = dynamic_cast<const json::out_of_range*>(&problem) != nullptr;
    throw invalid_argument("model '" + model_ + "': " + std::string(model_config_file) +
                           " is not valid JSON: " + (number ? "a number out of range" : "a syntax error") +
                           " at byte " + std::to_string(position));
  }

 private:
  std::string model_;
};

json parse_config_json(std::string_view text, const std::string& model) {
  const std::string where = "model '" + model + "': " + std::string(model_config_file);
  if (text.size() > max_model_config_bytes)
    throw invalid_argument(where + " has " + std::to_string(text.size()) + " bytes, more than the " +
                           std::to_string(max_model_config_bytes) + " a config may have");
  // The library reads a NUL byte as the end of the input and would ignore what follows it.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    throw invalid_argument(where + " is not valid JSON: a NUL byte at byte " + std::to_string(nul));
  json doc;
  config_document_builder builder(doc, model);
  try {
    // The parser keeps its own stack; the builder refuses nesting beyond max_json_depth as it
    // reads, so nothing recursive ever meets a deep document.
    (void)json::sax_parse(text.data(), text.data() + text.size(), &builder);
  } catch (const request_error& e) {  // the builder's bounds: its message starts ": ..."
    throw invalid_argument(where + e.what());
  }
  return doc;
}

}  // namespace

std::size_t default_max_queue_size(int workers) {
  return std::clamp<std::size_t>(32 * static_cast<std::size_t>(std::max(1, workers)), 64, 4096);
}

model_config parse_model_config(std::string_view json_text, std::string model_name) {
  model_config config;
  config.name = std::move(model_name);
  const json doc = parse_config_json(json_text, config.name);
  const config_reader read(doc, config.name);
  if (!doc.is_object()) read.fail("expected a JSON object");
  for (const auto& [key, value] : doc.items()) {
    if (key != "engine" && key != "strategy" && key != "inflight" && key != "instances_per_gpu" && key != "max_batch" &&
        key != "batch_delay_us" && key != "max_queue_size" && key != "input_size" && key != "tensor_strategies" &&
        key != "warmup_data" && key != "index_bounds" && key != "graph")
      read.fail("unknown key '" + quote_text(key) +
                "' (known: engine, strategy, inflight, instances_per_gpu, max_batch, "
                "batch_delay_us, max_queue_size, input_size, tensor_strategies, warmup_data, index_bounds, graph)");
  }
  if (read.find("engine") == nullptr) read.fail("'engine' is missing (e.g. \"mlp:2x256\", \"touch\")");
  config.engine = read.text("engine");
  if (config.engine.empty()) read.fail("'engine' is empty");
  if (read.find("strategy") != nullptr && read.text("strategy") == "auto") {
    config.strategy_auto = true;
  } else if (read.find("strategy") != nullptr) {
    try {
      config.strategy = parse_strategy(read.text("strategy"));
    } catch (const invalid_argument& e) {
      read.fail(quote_text(e.what(), 256));
    }
  }
  if (const json* overrides = read.find("tensor_strategies")) {
    if (!overrides->is_object())
      read.fail(
          "'tensor_strategies' must be an object of tensor names to strategies (e.g. {\"indices\": "
          "\"mapped\"}), got " +
          quote_json(*overrides));
    for (const auto& [tensor, value] : overrides->items()) {
      const std::string key = "'tensor_strategies': '" + quote_text(tensor) + "'";
      if (!value.is_string()) read.fail(key + " must be a strategy name, got " + quote_json(value));
      try {
        config.tensor_strategies.push_back({tensor, parse_strategy(value.get<std::string>())});
      } catch (const invalid_argument& e) {
        read.fail(key + ": " + quote_text(e.what(), 256));
      }
    }
  }
  constexpr std::int64_t int_max = std::numeric_limits<int>::max();
  if (const json* inflight = read.find("inflight"); inflight != nullptr && inflight->is_string()) {
    if (read.text("inflight") != "auto")
      read.fail("'inflight' must be a count in [1, 64] or \"auto\", got " + quote_json(*inflight));
    config.inflight_auto = true;
  } else if (inflight != nullptr) {
    config.inflight = static_cast<int>(read.integer("inflight", 1, 64));
  }
  if (const json* graph = read.find("graph")) {
    if (graph->is_boolean())
      config.graph = graph->get<bool>() ? graph_mode::on : graph_mode::off;
    else if (graph->is_string() && graph->get<std::string>() == "auto")
      config.graph = graph_mode::automatic;
    else
      read.fail("'graph' must be true, false or \"auto\", got " + quote_json(*graph));
  }
  if (read.find("instances_per_gpu") != nullptr)
    config.instances_per_gpu = static_cast<int>(read.integer("instances_per_gpu", 1, 64));
  if (read.find("max_batch") != nullptr) config.max_batch = read.integer("max_batch", 0, int_max);
  if (read.find("batch_delay_us") != nullptr)
    config.batch_delay = std::chrono::microseconds(read.integer("batch_delay_us", 0, 10'000'000));
  if (read.find("max_queue_size") != nullptr)
    config.max_queue_size = static_cast<std::size_t>(read.integer("max_queue_size", 0, int_max));
  if (const json* bounds = read.find("index_bounds")) {
    if (!bounds->is_object())
      read.fail("'index_bounds' must be an object of input names to bounds (e.g. {\"input_ids\": 30522}), got " +
                quote_json(*bounds));
    for (const auto& [tensor, value] : bounds->items()) {
      const std::string key = "'index_bounds': '" + quote_text(tensor) + "'";
      if (!value.is_number_integer() || value.get<std::int64_t>() < 1 ||
          (value.is_number_unsigned() && value.get<std::uint64_t>() > std::uint64_t{1} << 62))
        read.fail(key + " must be a whole number of at least 1, got " + quote_json(value));
      config.index_bounds.push_back({tensor, value.get<std::int64_t>()});
    }
    if (!config.index_bounds.empty() && !is_model_engine_spec(config.engine))
      read.fail("'index_bounds' bounds a model file's inputs; built-in engine '" + quote_text(config.engine) +
                "' declares its own");
  }
  if (read.find("warmup_data") != nullptr) {
    config.warmup_data = read.text("warmup_data");
    if (config.warmup_data.empty())
      read.fail("'warmup_data' is empty (auto, zero, random, or a .json/.npz file in the model's folder)");
  }
  if (const json* size = read.find("input_size")) {
    if (size->is_number_integer()) {
      config.input_bytes =
          static_cast<std::size_t>(read.integer("input_size", 1, std::numeric_limits<std::int64_t>::max()));
    } else {
      try {
        config.input_bytes = parse_byte_size(read.text("input_size"));
      } catch (const invalid_argument& e) {
        read.fail("'input_size': " + quote_text(e.what(), 256));
      }
    }
  }
  return config;
}

std::string tensor_strategies_text(const std::vector<tensor_strategy>& overrides) {
  std::string text;
  for (const auto& o : overrides)
    text += (text.empty() ? "" : ",") + o.tensor + "=" + std::string(to_string(o.strategy));
  return text;
}

}  // namespace ferry::serve
