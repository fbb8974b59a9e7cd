#include "serve/model_config.hpp"

#include <limits>

#include <nlohmann/json.hpp>

#include "ferry/byte_size.hpp"
#include "ferry/error.hpp"

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
    if (!v.is_string()) fail(std::string("'") + key + "' must be a string, got " + v.dump());
    return v.get<std::string>();
  }

  [[nodiscard]] std::int64_t integer(const char* key, std::int64_t lo, std::int64_t hi) const {
    const json& v = *find(key);
    if (!v.is_number_integer())
      fail(std::string("'") + key + "' must be an integer, got " + v.dump());
    // An unsigned value past int64's range would read back negative: name it as written.
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      fail(std::string("'") + key + "' must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
           v.dump());
    const auto n = v.get<std::int64_t>();
    if (n < lo || n > hi)
      fail(std::string("'") + key + "' must be in [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "], got " + std::to_string(n));
    return n;
  }

 private:
  const json& doc_;
  std::string model_;
};

}  // namespace

model_config parse_model_config(std::string_view json_text, std::string model_name) {
  model_config config;
  config.name = std::move(model_name);
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
    throw invalid_argument("model '" + config.name + "': " + std::string(model_config_file) +
                           " is not valid JSON: " + e.what());
  }
  const config_reader read(doc, config.name);
  if (!doc.is_object()) read.fail("expected a JSON object");
  for (const auto& [key, value] : doc.items()) {
    if (key != "engine" && key != "strategy" && key != "inflight" && key != "instances_per_gpu" &&
        key != "max_batch" && key != "batch_delay_us" && key != "max_queue_size" && key != "input_size" &&
        key != "tensor_strategies")
      read.fail("unknown key '" + key +
                "' (known: engine, strategy, inflight, instances_per_gpu, max_batch, "
                "batch_delay_us, max_queue_size, input_size, tensor_strategies)");
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
      read.fail(e.what());
    }
  }
  if (const json* overrides = read.find("tensor_strategies")) {
    if (!overrides->is_object())
      read.fail("'tensor_strategies' must be an object of tensor names to strategies (e.g. {\"indices\": "
                "\"mapped\"}), got " + overrides->dump());
    for (const auto& [tensor, value] : overrides->items()) {
      const std::string key = "'tensor_strategies': '" + tensor + "'";
      if (!value.is_string()) read.fail(key + " must be a strategy name, got " + value.dump());
      try {
        config.tensor_strategies.push_back({tensor, parse_strategy(value.get<std::string>())});
      } catch (const invalid_argument& e) {
        read.fail(key + ": " + e.what());
      }
    }
  }
  constexpr std::int64_t int_max = std::numeric_limits<int>::max();
  if (const json* inflight = read.find("inflight"); inflight != nullptr && inflight->is_string()) {
    if (read.text("inflight") != "auto") read.fail("'inflight' must be a count in [1, 64] or \"auto\", got " + inflight->dump());
    config.inflight_auto = true;
  } else if (inflight != nullptr) {
    config.inflight = static_cast<int>(read.integer("inflight", 1, 64));
  }
  if (read.find("instances_per_gpu") != nullptr)
    config.instances_per_gpu = static_cast<int>(read.integer("instances_per_gpu", 1, 64));
  if (read.find("max_batch") != nullptr) config.max_batch = read.integer("max_batch", 0, int_max);
  if (read.find("batch_delay_us") != nullptr)
    config.batch_delay = std::chrono::microseconds(read.integer("batch_delay_us", 0, 10'000'000));
  if (read.find("max_queue_size") != nullptr)
    config.max_queue_size = static_cast<std::size_t>(read.integer("max_queue_size", 0, int_max));
  if (const json* size = read.find("input_size")) {
    if (size->is_number_integer()) {
      config.input_bytes = static_cast<std::size_t>(
          read.integer("input_size", 1, std::numeric_limits<std::int64_t>::max()));
    } else {
      try {
        config.input_bytes = parse_byte_size(read.text("input_size"));
      } catch (const invalid_argument& e) {
        read.fail(std::string("'input_size': ") + e.what());
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
