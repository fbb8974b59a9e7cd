#include "ferry/core/dtype.hpp"

namespace ferry {

std::size_t size_of(dtype t) noexcept {
  switch (t) {
    case dtype::f32:
    case dtype::i32:
      return 4;
    case dtype::f16:
    case dtype::bf16:
      return 2;
    case dtype::i8:
    case dtype::u8:
    case dtype::boolean:
      return 1;
    case dtype::i64:
      return 8;
  }
  return 0;
}

std::string_view to_string(dtype t) noexcept {
  switch (t) {
    case dtype::f32:
      return "FP32";
    case dtype::f16:
      return "FP16";
    case dtype::bf16:
      return "BF16";
    case dtype::i8:
      return "INT8";
    case dtype::u8:
      return "UINT8";
    case dtype::i32:
      return "INT32";
    case dtype::i64:
      return "INT64";
    case dtype::boolean:
      return "BOOL";
  }
  return "UNKNOWN";
}

}  // namespace ferry
