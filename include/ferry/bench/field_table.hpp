// A struct's figures as one table of descriptors, so the renderers and the reader iterate the
// table instead of naming every member: adding a figure to the bench report is a member and its
// row beside it (ferry/bench/result.hpp), and JSON, CSV, the terminal table and markdown follow.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

namespace ferry::bench {

// Which renderings show a field. JSON and CSV show every field (they are the machine-readable
// forms); the terminal table and markdown show the fields marked for them, as columns.
enum class shown_in : std::uint8_t { files = 1, columns = 2 };

// One member of Owner: its name in JSON (and the base of its CSV column), its unit, what it
// means, and how the renderers treat it.
template <class Owner, class Member>
struct field {
  std::string_view key;
  Member Owner::*member;
  std::string_view unit;  // "µs", "bytes", "s", "1/s", "GB/s", "fraction", "" (counts, text)
  std::string_view description;
  // What a report that predates the field meant by it, where that differs from the member's
  // default (text fields only); empty: the default.
  std::string_view if_absent{};
  std::string_view csv_key{};  // the CSV column's name where it differs from key
  std::string_view column{};   // the terminal and markdown column title; empty: not shown there

  [[nodiscard]] constexpr field when_absent(std::string_view text) const {
    field f = *this;
    f.if_absent = text;
    return f;
  }
  [[nodiscard]] constexpr field in_csv_as(std::string_view name) const {
    field f = *this;
    f.csv_key = name;
    return f;
  }
  [[nodiscard]] constexpr field as_column(std::string_view title) const {
    field f = *this;
    f.column = title;
    return f;
  }
  [[nodiscard]] constexpr std::string_view csv_name() const { return csv_key.empty() ? key : csv_key; }
  [[nodiscard]] constexpr bool shown(shown_in where) const { return where == shown_in::files || !column.empty(); }
};

template <class Owner, class Member>
[[nodiscard]] constexpr field<Owner, Member> figure(std::string_view key, Member Owner::*member, std::string_view unit,
                                                    std::string_view description) {
  return {key, member, unit, description};
}

// Specialised beside each described struct: `static constexpr auto fields = std::tuple{figure(...), ...};`.
template <class T>
struct field_table;

template <class T>
concept described = requires {
  std::tuple_size<decltype(field_table<T>::fields)>::value;
};

// What the renderers ask of a member's type.
template <class T>
inline constexpr bool is_optional = false;
template <class T>
inline constexpr bool is_optional<std::optional<T>> = true;
template <class T>
inline constexpr bool is_list = false;
template <class T>
inline constexpr bool is_list<std::vector<T>> = true;
template <class T>
inline constexpr bool list_of_described = false;
template <described T>
inline constexpr bool list_of_described<std::vector<T>> = true;

// Calls visit(field) for every field of T, in the table's order.
template <described T, class Visit>
constexpr void for_each_field(Visit&& visit) {
  std::apply([&](const auto&... f) { (visit(f), ...); }, field_table<T>::fields);
}

}  // namespace ferry::bench
