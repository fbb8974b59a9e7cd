#include "ferry/session/index_check.hpp"

#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ferry {
namespace {

template <class T>
std::optional<index_violation> scan(std::span<const std::byte> data, std::int64_t bound) {
  const std::size_t n = data.size() / sizeof(T);
  const auto limit = static_cast<std::uint64_t>(bound);
  // One unsigned comparison per value (a negative value wraps past any bound), branch-free in the
  // common case so the loop vectorises; the position is looked for only once one is found.
  std::uint64_t out = 0;
  for (std::size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, data.data() + i * sizeof(T), sizeof(T));
    out += static_cast<std::uint64_t>(static_cast<std::uint64_t>(static_cast<std::int64_t>(v)) >= limit);
  }
  if (out == 0) return std::nullopt;
  for (std::size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, data.data() + i * sizeof(T), sizeof(T));
    if (static_cast<std::uint64_t>(static_cast<std::int64_t>(v)) >= limit)
      return index_violation{.tensor = {},
                             .value = static_cast<std::int64_t>(v),
                             .position = {static_cast<std::int64_t>(i)},
                             .bound = bound,
                             .count = out};
  }
  return std::nullopt;
}

}  // namespace

std::string describe(const index_violation& v) {
  std::string text = fmt::format("input '{}': value {} at [{}] is outside [0, {})", v.tensor, v.value,
                                 fmt::join(v.position, ", "), v.bound);
  if (v.count > 1) text += fmt::format(" ({} values out of range)", v.count);
  return text;
}

index_out_of_range::index_out_of_range(index_violation v) : invalid_argument(describe(v)), violation_(std::move(v)) {}

std::vector<std::int64_t> unravel(std::uint64_t flat, std::span<const std::int64_t> shape) {
  std::vector<std::int64_t> position(shape.size(), 0);
  for (std::size_t d = shape.size(); d-- > 0;) {
    const auto extent = static_cast<std::uint64_t>(shape[d] > 0 ? shape[d] : 1);
    position[d] = static_cast<std::int64_t>(flat % extent);
    flat /= extent;
  }
  if (shape.empty()) position.push_back(static_cast<std::int64_t>(flat));
  return position;
}

std::optional<index_violation> find_index_violation(std::span<const std::byte> data, const tensor_spec& spec,
                                                    std::span<const std::int64_t> shape) {
  if (!spec.index_bound) return std::nullopt;
  std::optional<index_violation> found;
  if (spec.type == dtype::i64)
    found = scan<std::int64_t>(data, *spec.index_bound);
  else if (spec.type == dtype::i32)
    found = scan<std::int32_t>(data, *spec.index_bound);
  if (!found) return std::nullopt;
  found->tensor = spec.name;
  found->position = unravel(static_cast<std::uint64_t>(found->position.front()), shape);
  return found;
}

}  // namespace ferry
