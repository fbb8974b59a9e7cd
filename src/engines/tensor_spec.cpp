#include "ferry/core/error.hpp"
#include "ferry/engines/engine.hpp"

namespace ferry {

bool tensor_spec::is_dynamic() const noexcept {
  for (auto d : shape)
    if (d < 0) return true;
  return false;
}

std::size_t tensor_spec::elements() const {
  std::size_t n = 1;
  for (auto d : shape) {
    if (d < 0) throw invalid_argument("tensor '" + name + "' still has a dynamic dimension");
    n *= static_cast<std::size_t>(d);
  }
  return n;
}

std::size_t tensor_spec::bytes() const { return elements() * size_of(type); }

}  // namespace ferry
