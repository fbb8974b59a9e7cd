// A struct's figures as one table of descriptors, so the renderers and the reader iterate the
// table instead of naming every member: adding a figure to the bench report is one row of its
// part's table (ferry/bench/result.hpp), and JSON, CSV, the terminal table and markdown follow.
// A row names a member (figure), or a value computed from the struct (computed): a figure derived
// from others, or a member whose type is not a plain value (a std::variant) shown as the keys it
// has always had. A struct made of parts (members, each a described struct) lists them instead
// of fields, and the walk flattens them: its fields are its parts' fields, in order, each reached
// through its part, so a caller holding the whole reads any field and one holding a part reads
// that part's.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace ferry::bench {

// Which renderings show a field. JSON and CSV show every field (they are the machine-readable
// forms); the terminal table and markdown show the fields marked for them, as columns.
enum class shown_in : std::uint8_t { files = 1, columns = 2 };

// How the renderers treat a row, and the builders that set it, shared by both kinds of row
// (Derived: field or computed_field, each with a `key`).
template <class Derived>
struct field_rendering {
  // What a report that predates the field meant by it, where that differs from the member's
  // default (text fields only); empty: the default.
  std::string_view if_absent{};
  std::string_view csv_key{};  // the CSV column's name where it differs from key
  std::string_view column{};   // the terminal and markdown column title; empty: not shown there

  [[nodiscard]] constexpr Derived when_absent(std::string_view text) const {
    Derived f = self();
    f.if_absent = text;
    return f;
  }
  [[nodiscard]] constexpr Derived in_csv_as(std::string_view name) const {
    Derived f = self();
    f.csv_key = name;
    return f;
  }
  [[nodiscard]] constexpr Derived as_column(std::string_view title) const {
    Derived f = self();
    f.column = title;
    return f;
  }
  [[nodiscard]] constexpr std::string_view csv_name() const { return csv_key.empty() ? self().key : csv_key; }
  [[nodiscard]] constexpr bool shown(shown_in where) const { return where == shown_in::files || !column.empty(); }

 private:
  [[nodiscard]] constexpr const Derived& self() const { return static_cast<const Derived&>(*this); }
};

// One member of Owner: its name in JSON (and the base of its CSV column), its unit, what it
// means, and how the renderers treat it.
template <class Owner, class Member>
struct field : field_rendering<field<Owner, Member>> {
  std::string_view key;
  Member Owner::*member;
  std::string_view unit;  // "µs", "bytes", "s", "1/s", "GB/s", "fraction", "" (counts, text)
  std::string_view description;
};

template <class Owner, class Member>
[[nodiscard]] constexpr field<Owner, Member> figure(std::string_view key, Member Owner::*member, std::string_view unit,
                                                    std::string_view description) {
  return {{}, key, member, unit, description};
}

// A value computed from Owner rather than held in a member: written like a member, and read back
// through `set` (nullptr: a derived figure, recomputed from the fields it is made of, not read).
template <class Owner, class Value>
struct computed_field : field_rendering<computed_field<Owner, Value>> {
  std::string_view key;
  Value (*get)(const Owner&);
  void (*set)(Owner&, Value);
  std::string_view unit;
  std::string_view description;
};

template <class Owner, class Value>
[[nodiscard]] constexpr computed_field<Owner, Value> computed(std::string_view key, Value (*get)(const Owner&),
                                                              void (*set)(Owner&, Value), std::string_view unit,
                                                              std::string_view description) {
  return {{}, key, get, set, unit, description};
}

// Specialised beside each described struct: `static constexpr auto fields = std::tuple{figure(...), ...};`,
// or, for a struct made of described parts (its members), `static constexpr auto parts =
// std::tuple{&T::a, &T::b, ...};`.
template <class T>
struct field_table;

template <class T>
concept has_fields = requires {
  std::tuple_size<decltype(field_table<T>::fields)>::value;
};

template <class T>
concept has_parts = requires {
  std::tuple_size<std::remove_cv_t<decltype(field_table<T>::parts)>>::value;
};

template <class T>
concept described = has_fields<T> || has_parts<T>;

// The type of the part a member pointer of a struct of parts names.
template <class Pointer>
struct part_type;
template <class Whole, class Part>
struct part_type<Part Whole::*> {
  using type = Part;
};

// The member of Whole that is its part of type Part (a compile error when it has none).
template <class Part, class Whole, std::size_t I = 0>
[[nodiscard]] constexpr auto part_pointer() {
  constexpr auto pointer = std::get<I>(field_table<Whole>::parts);
  if constexpr (std::is_same_v<std::remove_cv_t<decltype(pointer)>, Part Whole::*>)
    return pointer;
  else
    return part_pointer<Part, Whole, I + 1>();
}

// The Owner a field belongs to, in `object`: the object itself (or its base), or its part of that
// type; const as the object is.
template <class Owner, class Object>
[[nodiscard]] constexpr auto& owner_in(Object& object) {
  using whole = std::remove_const_t<Object>;
  if constexpr (std::is_same_v<Owner, whole> || std::is_base_of_v<Owner, whole>)
    return static_cast<std::conditional_t<std::is_const_v<Object>, const Owner&, Owner&>>(object);
  else
    return object.*(part_pointer<Owner, whole>());
}

// A field's value in `object` (an Owner, or a struct of parts with an Owner among them), and
// storing one.
template <class Owner, class Member, class Object>
[[nodiscard]] constexpr const Member& value_of(const field<Owner, Member>& f, const Object& object) {
  return owner_in<Owner>(object).*(f.member);
}
template <class Owner, class Value, class Object>
[[nodiscard]] Value value_of(const computed_field<Owner, Value>& f, const Object& object) {
  return f.get(owner_in<Owner>(object));
}
template <class Owner, class Member, class Object>
void store(const field<Owner, Member>& f, Object& object, Member value) {
  owner_in<Owner>(object).*(f.member) = std::move(value);
}
template <class Owner, class Value, class Object>
void store(const computed_field<Owner, Value>& f, Object& object, Value value) {
  if (f.set != nullptr) f.set(owner_in<Owner>(object), std::move(value));
}
// A derived figure is written, never read: a report gets it from the fields it is made of.
template <class Owner, class Member>
[[nodiscard]] constexpr bool is_read(const field<Owner, Member>&) {
  return true;
}
template <class Owner, class Value>
[[nodiscard]] constexpr bool is_read(const computed_field<Owner, Value>& f) {
  return f.set != nullptr;
}

// The type of a field's value, as value_of gives it.
template <class Field>
struct field_value;
template <class Owner, class Member>
struct field_value<field<Owner, Member>> {
  using type = Member;
};
template <class Owner, class Value>
struct field_value<computed_field<Owner, Value>> {
  using type = Value;
};
template <class Field>
using field_value_t = typename field_value<std::remove_cvref_t<Field>>::type;

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

// Calls visit(field) for every field of T, in the table's order; a struct of parts, every field of
// each part in turn (value_of and store reach a part's fields through the whole).
template <described T, class Visit>
constexpr void for_each_field(Visit&& visit) {
  if constexpr (has_parts<T>) {
    std::apply([&](auto... part) { (for_each_field<typename part_type<decltype(part)>::type>(visit), ...); },
               field_table<T>::parts);
  } else {
    std::apply([&](const auto&... f) { (visit(f), ...); }, field_table<T>::fields);
  }
}

}  // namespace ferry::bench
