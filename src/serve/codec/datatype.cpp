#include "serve/codec/datatype.hpp"

#include <array>

namespace ferry::serve {

std::optional<dtype> parse_datatype(std::string_view name) noexcept {
  constexpr std::array all{dtype::f32, dtype::f16, dtype::bf16, dtype::i8,
                           dtype::u8,  dtype::i32, dtype::i64,  dtype::boolean};
  for (const dtype t : all)
    if (to_string(t) == name) return t;
  return std::nullopt;
}

}  // namespace ferry::serve
