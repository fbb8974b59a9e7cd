#include "serve/vocabulary/safe_name.hpp"

#include <fmt/format.h>

namespace ferry::serve {
namespace {

bool control(char32_t c) noexcept { return c < 0x20 || (c >= 0x7f && c <= 0x9f); }

bool formatting(char32_t c) noexcept {
  return c == 0xad || c == 0x61c || c == 0x180e || (c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) ||
         (c >= 0x2060 && c <= 0x206f) || c == 0xfeff || (c >= 0xfff9 && c <= 0xfffb);
}

bool noncharacter(char32_t c) noexcept { return (c >= 0xfdd0 && c <= 0xfdef) || (c & 0xfffe) == 0xfffe; }

bool separator(char32_t c) noexcept { return c == '/' || c == '\\' || c == '"'; }

// Why a code point may not be in a safe name, or null.
const char* unsafe(char32_t c) noexcept {
  if (control(c)) return "a control character";
  if (formatting(c)) return "an invisible or bidirectional formatting character";
  if (noncharacter(c)) return "a Unicode noncharacter";
  if (separator(c)) return "a character that separates paths or quotes text";
  return nullptr;
}

}  // namespace

std::size_t utf8_sequence(std::string_view text, std::size_t at, char32_t& code_point) noexcept {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) {
    code_point = lead;
    return 1;
  }
  std::size_t length = 0;
  char32_t value = 0;
  char32_t least = 0;  // the smallest value of this length: shorter forms are overlong
  if ((lead & 0xe0) == 0xc0) {
    length = 2, value = lead & 0x1f, least = 0x80;
  } else if ((lead & 0xf0) == 0xe0) {
    length = 3, value = lead & 0x0f, least = 0x800;
  } else if ((lead & 0xf8) == 0xf0) {
    length = 4, value = lead & 0x07, least = 0x10000;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) return 0;
    value = (value << 6) | (byte(at + i) & 0x3f);
  }
  if (value < least || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) return 0;
  code_point = value;
  return length;
}

std::optional<std::string> name_problem(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name.size() > max_name_bytes)
    return fmt::format("has {} bytes, more than the {} a name may have", name.size(), max_name_bytes);
  for (std::size_t at = 0; at < name.size();) {
    char32_t c = 0;
    const std::size_t length = utf8_sequence(name, at, c);
    if (length == 0)
      return fmt::format("is not valid UTF-8 (byte 0x{:02x} at offset {})", static_cast<unsigned char>(name[at]), at);
    if (const char* why = unsafe(c)) return fmt::format("holds U+{:04X}, {}", static_cast<std::uint32_t>(c), why);
    at += length;
  }
  return std::nullopt;
}

std::string printable_name(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto escape = [&out](std::string_view bytes) {
    for (const char b : bytes) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(b));
  };
  for (std::size_t at = 0; at < text.size();) {
    char32_t c = 0;
    const std::size_t length = utf8_sequence(text, at, c);
    if (length == 0) {
      escape(text.substr(at, 1));
      ++at;
      continue;
    }
    if (unsafe(c) != nullptr)
      escape(text.substr(at, length));
    else
      out.append(text.substr(at, length));
    at += length;
  }
  return out;
}

}  // namespace ferry::serve
