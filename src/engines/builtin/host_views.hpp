// Typed views of the byte spans run_on_host receives, checked for count, size and alignment so a
// wrong buffer is an invalid_argument naming the tensor, never a read past the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

namespace ferry::builtin {

// Throws invalid_argument unless run_on_host got exactly the expected number of spans.
void require_span_counts(std::string_view engine_name, std::size_t inputs_given, std::size_t inputs_expected,
                         std::size_t outputs_given, std::size_t outputs_expected);

[[noreturn]] void throw_bad_host_view(std::string_view engine_name, std::string_view tensor, std::size_t bytes,
                                      std::size_t expected_bytes, std::size_t alignment);

template <typename T, typename Byte>
[[nodiscard]] auto typed_view(std::string_view engine_name, std::string_view tensor, std::span<Byte> bytes,
                              std::size_t expected_elements) {
  using element = std::conditional_t<std::is_const_v<Byte>, const T, T>;
  const std::size_t expected_bytes = expected_elements * sizeof(T);
  if (bytes.size() != expected_bytes || reinterpret_cast<std::uintptr_t>(bytes.data()) % alignof(T) != 0)
    throw_bad_host_view(engine_name, tensor, bytes.size(), expected_bytes, alignof(T));
  return std::span<element>(reinterpret_cast<element*>(bytes.data()), expected_elements);
}

}  // namespace ferry::builtin
