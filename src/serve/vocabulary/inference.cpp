#include "serve/vocabulary/inference.hpp"

#include <algorithm>
#include <limits>

namespace ferry::serve {

std::chrono::microseconds timeout_microseconds(std::uint64_t microseconds) noexcept {
  constexpr auto most = static_cast<std::uint64_t>(std::numeric_limits<std::chrono::microseconds::rep>::max());
  return std::chrono::microseconds(static_cast<std::chrono::microseconds::rep>(std::min(microseconds, most)));
}

std::size_t element_count(std::span<const std::int64_t> shape) noexcept {
  std::size_t n = 1;
  for (const auto d : shape) n *= static_cast<std::size_t>(d);
  return n;
}

std::string shape_text(std::span<const std::int64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(shape[i]);  // appended apart: gcc 12 misreads "," + string as an overlapping copy
  }
  s += ']';
  return s;
}

}  // namespace ferry::serve
