// The CSV rendering: one flat row per result for spreadsheets and data frames, its columns the
// field table of ferry/bench/result.hpp. Header and rows come from the same list of (name, value)
// fields, so they cannot disagree on the column count.
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (moved here in newer fmt)

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "ferry/bench/report.hpp"
#include "ferry/device/device_set.hpp"

namespace ferry::bench {

namespace {

using csv_fields = std::vector<std::pair<std::string, std::string>>;

std::string column_name(std::string_view prefix, std::string_view name) {
  return prefix.empty() ? std::string(name) : fmt::format("{}_{}", prefix, name);
}

// One value as text: shortest text that reads back as the same number, lists "; "-separated
// (the GPUs as --devices reads them).
template <class T>
std::string text_of(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return value;
  } else if constexpr (std::is_same_v<T, std::optional<strategy_kind>>) {
    return std::string(strategy_name(value));
  } else if constexpr (std::is_same_v<T, std::vector<int>>) {
    return format_device_set(value);
  } else if constexpr (is_list<T>) {
    std::vector<std::string> items;
    for (const auto& item : value) items.push_back(text_of(item));
    return fmt::format("{}", fmt::join(items, "; "));
  } else {
    return fmt::format("{}", value);
  }
}

// The columns of a value named `name`: a described struct flattens into <name>_<field> columns,
// an absent optional into empty cells (so every row has every column), a list of described
// structs into its count under the field's key ("trials") and one column per element field
// holding every element's value ("trial_median_us").
template <class T>
void add_columns(csv_fields& out, const std::string& name, const T* value) {
  if constexpr (described<T>) {
    for_each_field<T>([&](const auto& f) {
      using member_type = field_value_t<decltype(f)>;
      // A copy: a computed field has no member to point at.
      const std::optional<member_type> held = value ? std::optional<member_type>(value_of(f, *value)) : std::nullopt;
      const member_type* member = held ? &*held : nullptr;
      if constexpr (list_of_described<member_type>) {
        out.emplace_back(column_name(name, f.key), member ? text_of(member->size()) : "");
        for_each_field<typename member_type::value_type>([&](const auto& g) {
          std::vector<std::string> items;
          if (member)
            for (const auto& element : *member) items.push_back(text_of(value_of(g, element)));
          out.emplace_back(column_name(column_name(name, f.csv_name()), g.csv_name()),
                           fmt::format("{}", fmt::join(items, "; ")));
        });
      } else {
        add_columns(out, column_name(name, f.csv_name()), member);
      }
    });
  } else if constexpr (is_optional<T> && !std::is_same_v<T, std::optional<strategy_kind>>) {
    add_columns(out, name, value && value->has_value() ? &**value : nullptr);
  } else {
    out.emplace_back(name, value ? text_of(*value) : "");
  }
}

// Every field of a result, in the field table's order.
csv_fields fields_of(const strategy_result& r) {
  csv_fields f;
  add_columns(f, "", &r);
  return f;
}

// RFC 4180: a field with a comma, quote or line break is quoted, and its quotes doubled.
std::string quote(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

template <class Pick>
std::string csv_line(const csv_fields& fields, Pick pick) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line += ',';
    line += quote(pick(fields[i]));
  }
  return line + "\n";
}

}  // namespace

std::string render_csv(const bench_report& report) {
  // The header comes from a default result, so a report without results still has one.
  std::string out = csv_line(fields_of(strategy_result{}), [](const auto& f) { return f.first; });
  for (const strategy_result& r : report.results) {
    out += csv_line(fields_of(r), [](const auto& f) { return f.second; });
  }
  return out;
}

}  // namespace ferry::bench
