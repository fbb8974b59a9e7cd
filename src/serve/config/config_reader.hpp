// Reading one key of a model's config.json: typed accessors that refuse a wrong type or an
// out-of-range value naming the model, the file and the key (quoting at most a short excerpt of
// the value). Internal to serve/control: model_config.cpp and the key table use it.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace ferry::serve {

class config_reader {
 public:
  using json = nlohmann::json;
  config_reader(const json& doc, std::string model) : doc_(doc), model_(std::move(model)) {}

  [[noreturn]] void fail(const std::string& problem) const;
  // The key's value, or null when the config does not set it.
  [[nodiscard]] const json* find(const char* key) const;
  [[nodiscard]] std::string text(const char* key) const;
  [[nodiscard]] std::int64_t integer(const char* key, std::int64_t lo, std::int64_t hi) const;
  // A finite number (integer or not) in [lo, hi].
  [[nodiscard]] double number(const char* key, double lo, double hi) const;

 private:
  const json& doc_;
  std::string model_;
};

}  // namespace ferry::serve
