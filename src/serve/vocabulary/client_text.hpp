// Text that came from clients, files or libraries, as the server writes it back: cut short,
// control characters and bytes that are not UTF-8 shown as \xNN, absolute paths cut to their last
// component. Every message a request's error carries quotes what it names through these.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ferry::serve {

// At most this many characters of a client's value are quoted in an error message.
inline constexpr std::size_t max_quoted_chars = 64;

// A client's value as error messages quote it, at most about max_quoted_chars characters:
// numbers, booleans and null as JSON, strings as JSON cut short with "...", arrays and objects
// by their size ("an array of 3 elements").
[[nodiscard]] std::string quote_json(const nlohmann::json& value);

// `text` cut to `limit` bytes, with "..." when cut, and control characters and bytes that are not
// UTF-8 shown as \xNN (valid UTF-8 whatever `text` holds); for names and keys taken from a
// request or a file.
[[nodiscard]] std::string quote_text(std::string_view text, std::size_t limit = max_quoted_chars);

// Whether `text` holds a control character (below 0x20, or DEL), NUL included.
[[nodiscard]] bool has_control_character(std::string_view text) noexcept;

// What a failure's message may show to clients: absolute paths cut to their last component,
// control characters escaped, at most a few hundred characters.
[[nodiscard]] std::string public_reason(std::string_view message);

}  // namespace ferry::serve
