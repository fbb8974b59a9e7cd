#include "serve/inference.hpp"

namespace ferry::serve {

std::size_t element_count(std::span<const std::int64_t> shape) noexcept {
  std::size_t n = 1;
  for (const auto d : shape) n *= static_cast<std::size_t>(d);
  return n;
}

std::string shape_text(std::span<const std::int64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace ferry::serve
