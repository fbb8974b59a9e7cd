#include "ferry/engine.hpp"
#include "ferry/error.hpp"

namespace ferry {

std::size_t size_of(dtype t) noexcept {
  switch (t) {
    case dtype::f32: case dtype::i32: return 4;
    case dtype::f16: case dtype::bf16: return 2;
    case dtype::i8: case dtype::u8: case dtype::boolean: return 1;
    case dtype::i64: return 8;
  }
  return 0;
}

std::string_view to_string(dtype t) noexcept {
  switch (t) {
    case dtype::f32: return "FP32";
    case dtype::f16: return "FP16";
    case dtype::bf16: return "BF16";
    case dtype::i8: return "INT8";
    case dtype::u8: return "UINT8";
    case dtype::i32: return "INT32";
    case dtype::i64: return "INT64";
    case dtype::boolean: return "BOOL";
  }
  return "UNKNOWN";
}

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
