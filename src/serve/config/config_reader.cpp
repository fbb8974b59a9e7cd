#include "serve/config/config_reader.hpp"

#include <cmath>

#include <fmt/format.h>

#include "ferry/core/error.hpp"
#include "serve/codec/client_json.hpp"
#include "serve/config/model_config.hpp"

namespace ferry::serve {

void config_reader::fail(const std::string& problem) const {
  throw invalid_argument("model '" + model_ + "': " + std::string(model_config_file) + ": " + problem);
}

const config_reader::json* config_reader::find(const char* key) const {
  const auto it = doc_.find(key);
  return it == doc_.end() ? nullptr : &*it;
}

std::string config_reader::text(const char* key) const {
  const json& v = *find(key);
  if (!v.is_string()) fail(std::string("'") + key + "' must be a string, got " + quote_json(v));
  return v.get<std::string>();
}

std::int64_t config_reader::integer(const char* key, std::int64_t lo, std::int64_t hi) const {
  const json& v = *find(key);
  if (!v.is_number_integer()) fail(std::string("'") + key + "' must be an integer, got " + quote_json(v));
  // An unsigned value past int64's range would read back negative: name it as written.
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
    fail(fmt::format("'{}' must be in [{}, {}], got {}", key, lo, hi, quote_json(v)));
  const auto n = v.get<std::int64_t>();
  if (n < lo || n > hi) fail(fmt::format("'{}' must be in [{}, {}], got {}", key, lo, hi, n));
  return n;
}

double config_reader::number(const char* key, double lo, double hi) const {
  const json& v = *find(key);
  if (!v.is_number()) fail(std::string("'") + key + "' must be a number, got " + quote_json(v));
  const double n = v.get<double>();
  if (!std::isfinite(n) || n < lo || n > hi)
    fail(fmt::format("'{}' must be in [{}, {}], got {}", key, lo, hi, quote_json(v)));
  return n;
}

}  // namespace ferry::serve
