#include "serve/codec/base64.hpp"

#include <cstdint>

#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve {
namespace {

int sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Triton's C++ clients (perf_analyzer) encode with libb64, which breaks the line every 72
// characters and ends with a newline: whitespace is layout, not data.
std::string without_layout(std::string_view text) {
  std::string compact;
  compact.reserve(text.size());
  for (const char c : text)
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') compact += c;
  return compact;
}

// The group of four characters at `at` (the last may end in one or two '='), appended to `out`.
void decode_group(std::string_view text, std::size_t at, std::string& out) {
  int v[4];
  int pad = 0;
  const bool last_group = at + 4 == text.size();
  for (int k = 0; k < 4; ++k) {
    const char c = text[at + static_cast<std::size_t>(k)];
    if (c == '=' && last_group && k >= 2 && (k == 3 || text[at + 3] == '=')) {
      v[k] = 0;
      ++pad;
      continue;
    }
    v[k] = sextet(c);
    if (v[k] < 0 || pad > 0)
      throw bad_request("malformed base64 at character " + std::to_string(at + static_cast<std::size_t>(k)));
  }
  const std::uint32_t bits = (static_cast<std::uint32_t>(v[0]) << 18) | (static_cast<std::uint32_t>(v[1]) << 12) |
                             (static_cast<std::uint32_t>(v[2]) << 6) | static_cast<std::uint32_t>(v[3]);
  out += static_cast<char>((bits >> 16) & 0xFF);
  if (pad < 2) out += static_cast<char>((bits >> 8) & 0xFF);
  if (pad < 1) out += static_cast<char>(bits & 0xFF);
}

}  // namespace

std::string decode_base64(std::string_view text) {
  const std::string compact = without_layout(text);
  if (compact.size() % 4 != 0)
    throw bad_request("base64 text of " + std::to_string(compact.size()) + " characters is not a multiple of 4");
  std::string out;
  for (std::size_t i = 0; i < compact.size(); i += 4) decode_group(compact, i, out);
  return out;
}

}  // namespace ferry::serve
