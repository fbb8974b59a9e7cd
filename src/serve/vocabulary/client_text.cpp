#include "serve/vocabulary/client_text.hpp"

#include "serve/vocabulary/safe_name.hpp"

namespace ferry::serve {

using json = nlohmann::json;

std::string quote_text(std::string_view text, std::size_t limit) {
  std::string quoted;
  const std::string_view cut = text.substr(0, limit);
  quoted.reserve(cut.size() + 3);
  static constexpr char hex[] = "0123456789abcdef";
  const auto escape = [&quoted](char c) {
    const auto byte = static_cast<unsigned char>(c);
    quoted += "\\x";
    quoted.push_back(hex[byte >> 4]);
    quoted.push_back(hex[byte & 15]);
  };
  for (std::size_t at = 0; at < cut.size();) {
    char32_t c = 0;
    const std::size_t length = utf8_sequence(cut, at, c);
    // A control character would end a C string (NUL), split a log line (newline) or move a
    // terminal's cursor, and bytes that are not UTF-8 would make the message unreadable as text
    // (a gRPC status, a JSON document): they are shown, not sent.
    if (length == 0) {
      escape(cut[at++]);
      continue;
    }
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) {
      for (std::size_t i = 0; i < length; ++i) escape(cut[at + i]);
    } else {
      quoted.append(cut.substr(at, length));
    }
    at += length;
  }
  if (text.size() > limit) quoted += "...";
  return quoted;
}

bool has_control_character(std::string_view text) noexcept {
  for (const char c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  return false;
}

std::string quote_json(const json& value) {
  if (value.is_array()) return "an array of " + std::to_string(value.size()) + " elements";
  if (value.is_object()) return "an object of " + std::to_string(value.size()) + " members";
  if (value.is_string()) {
    const auto& s = value.get_ref<const std::string&>();
    // Cut first, then escape: a cut inside a UTF-8 sequence is replaced, not rejected.
    const std::string quoted = json(s.substr(0, max_quoted_chars)).dump(-1, ' ', false, json::error_handler_t::replace);
    return s.size() > max_quoted_chars ? quoted + "..." : quoted;
  }
  return value.dump();  // a number, true, false or null: short
}

std::string public_reason(std::string_view message) {
  // An absolute path starts a token: at the start, or after a space, a quote, a bracket, '=' or
  // ':' ("torch:/models/x.pt2"). It is shown by its last component.
  std::string cut;
  cut.reserve(message.size());
  for (std::size_t i = 0; i < message.size();) {
    const bool token_start = i == 0 || std::string_view(" '\"(=:,[").find(message[i - 1]) != std::string_view::npos;
    if (message[i] == '/' && token_start) {
      std::size_t end = i;
      while (end < message.size() && std::string_view(" '\"),]\n").find(message[end]) == std::string_view::npos) ++end;
      const std::string_view path = message.substr(i, end - i);
      const auto last = path.find_last_of('/');
      cut += last + 1 < path.size() ? path.substr(last + 1) : "(a path)";
      i = end;
      continue;
    }
    cut.push_back(message[i++]);
  }
  constexpr std::size_t max_reason_chars = 512;
  return quote_text(cut, max_reason_chars);
}

}  // namespace ferry::serve
