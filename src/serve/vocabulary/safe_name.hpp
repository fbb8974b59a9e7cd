// Names that come from outside the server, as bytes nobody vouched for: model folder names,
// shared-memory region names and keys. They reach log lines, JSON documents, Prometheus labels
// and protobuf string fields, which must be valid UTF-8 (a gRPC answer carrying byte 0xFF fails to
// parse in every client), and some characters make a name that reads as another one (invisible
// and bidirectional formatting characters) or splits a line. So a name is used only when it is a
// safe name; anything else is refused with the reason, and shown through printable_name.
//
// A safe name: 1 to 255 bytes of valid UTF-8 (shortest forms, no surrogates, nothing past
// U+10FFFF), without control characters (C0, DEL, C1), invisible or bidirectional formatting
// characters (U+00AD, U+061C, U+180E, U+200B-U+200F, U+2028-U+202E, U+2060-U+206F, U+FEFF,
// U+FFF9-U+FFFB), noncharacters (U+FDD0-U+FDEF, U+xFFFE, U+xFFFF), and the characters that
// separate paths or quote text: / \ ".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::serve {

inline constexpr std::size_t max_name_bytes = 255;

// Why `name` is not a safe name ("is not valid UTF-8 (byte 0xff at 3)", "holds U+202E, a
// bidirectional formatting character"), or nothing when it is one.
[[nodiscard]] std::optional<std::string> name_problem(std::string_view name);

// `text` with every byte of what a safe name may not hold written \xNN (a backslash too, so no
// two texts print the same): valid UTF-8 for any bytes, and the text itself when it is a safe
// name. How the server names what it refused, in logs and answers.
[[nodiscard]] std::string printable_name(std::string_view text);

// The length of the UTF-8 sequence starting at `text[at]` when it is a valid one (1 to 4), or 0;
// `code_point` receives its value.
[[nodiscard]] std::size_t utf8_sequence(std::string_view text, std::size_t at, char32_t& code_point) noexcept;

}  // namespace ferry::serve
