// JSON form of a bench_report, written and read through the field tables of
// ferry/bench/result.hpp: the keys are the tables' keys, so the structs and their tables are the
// schema's documentation; scripts/plot_bench.py reads this layout.
#include <nlohmann/json.hpp>

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "ferry/bench/report.hpp"
#include "ferry/core/error.hpp"

namespace ferry::bench {

namespace {

using nlohmann::json;

// ---- writing: every value by its type, a described struct as an object of its fields -------------

template <class T>
json to_json_value(const T& value) {
  if constexpr (described<T>) {
    json object = json::object();
    for_each_field<T>([&](const auto& f) { object[std::string(f.key)] = to_json_value(value_of(f, value)); });
    return object;
  } else if constexpr (std::is_same_v<T, std::optional<strategy_kind>>) {
    return std::string(strategy_name(value));
  } else if constexpr (is_optional<T>) {
    return value ? to_json_value(*value) : json(nullptr);
  } else if constexpr (list_of_described<T>) {
    json array = json::array();
    for (const auto& element : value) array.push_back(to_json_value(element));
    return array;
  } else {
    return json(value);
  }
}

// ---- reading: the mirror, driven by the same tables ------------------------------------------

std::string quoted(std::string_view key) { return "\"" + std::string(key) + "\""; }

// A present value of the wrong type throws (through nlohmann, or invalid_argument naming the
// key), which report_from_json turns into one message. JSON has no NaN or infinity (nlohmann
// writes them as null), so null reads back as NaN for floating-point fields rather than failing
// the whole report.
template <class T>
void from_json_value(const json& j, std::string_view key, T& out) {
  if constexpr (described<T>) {
    if (!j.is_object()) throw invalid_argument(quoted(key) + " is not an object");
    for_each_field<T>([&](const auto& f) {
      using value_type = field_value_t<decltype(f)>;
      if (!is_read(f)) return;
      const auto it = j.find(f.key);
      if (it != j.end()) {
        value_type value{};
        from_json_value(*it, f.key, value);
        store(f, out, std::move(value));
      } else if constexpr (std::is_same_v<value_type, std::string>) {
        if (!f.if_absent.empty()) store(f, out, std::string(f.if_absent));
      }
    });
  } else if constexpr (std::is_same_v<T, std::optional<strategy_kind>>) {
    const auto name = j.get<std::string>();  // parsed once, here: unknown names are refused
    out = name == "auto" ? std::nullopt : std::optional(parse_strategy(name));
  } else if constexpr (is_optional<T>) {
    if (j.is_null()) {
      out.reset();
    } else {
      typename T::value_type value{};
      from_json_value(j, key, value);
      out = std::move(value);
    }
  } else if constexpr (list_of_described<T>) {
    if (!j.is_array()) throw invalid_argument(quoted(key) + " is not an array");
    out.clear();
    for (const json& element : j) from_json_value(element, key, out.emplace_back());
  } else if constexpr (std::is_floating_point_v<T>) {
    out = j.is_null() ? std::numeric_limits<T>::quiet_NaN() : j.get<T>();
  } else {
    out = j.get<T>();
  }
}

bench_report report_from_json_unchecked(const json& j) {
  if (!j.is_object()) throw invalid_argument("the document is not a JSON object");
  const int version = j.value("schema_version", report_schema_version);
  if (version > report_schema_version) {
    throw invalid_argument("schema_version " + std::to_string(version) + " is newer than this ferry reads (" +
                           std::to_string(report_schema_version) + ")");
  }
  // Every report has its cells, even an empty run; `{}`, a calibration profile or another tool's
  // JSON is not a report, and comparing it would call nothing different without a word.
  if (!j.contains("results"))
    throw invalid_argument(j.contains("curves") ? "this is a calibration profile (ferry calibrate), not a bench report"
                                                : "this is not a ferry bench report: it has no \"results\"");
  bench_report report;
  from_json_value(j, "report", report);
  return report;
}

}  // namespace

nlohmann::json to_json(const bench_report& report) {
  json doc = to_json_value(report);
  doc["schema_version"] = report_schema_version;
  if (report.advice_checks.empty()) doc.erase("advice_checks");  // reports without a profile, as before
  return doc;
}

bench_report report_from_json(const nlohmann::json& json) {
  try {
    return report_from_json_unchecked(json);
  } catch (const invalid_argument& e) {
    throw invalid_argument(std::string("bench report JSON: ") + e.what());
  } catch (const nlohmann::json::exception& e) {
    // Type errors from get<T>(): say which report it was, keep nlohmann's description.
    throw invalid_argument(std::string("bench report JSON: ") + e.what());
  }
}

}  // namespace ferry::bench
