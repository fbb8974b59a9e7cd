#include "serve/transport/http/header_block.hpp"

namespace ferry::serve {

void header_block_scanner::refuse(const std::string& what) {
  refusal_ = "malformed HTTP request: " + what + " at byte " + std::to_string(scanned_) + " of its head";
}

void header_block_scanner::scan(std::string_view head) {
  for (; scanned_ < head.size() && !end_ && !refusal_; ++scanned_) {
    const char c = head[scanned_];
    if (after_cr_ && c != '\n') return refuse("a CR not followed by LF");
    if (c == '\0') return refuse("a NUL byte");
    if (c == '\n') {
      if (!after_cr_) return refuse("a line ended by LF alone, not CRLF");
      after_cr_ = false;
      // An empty line ends the head (an empty first line is no request line: the parser says so).
      if (at_line_start_ && !first_line_) end_ = scanned_ + 1;
      at_line_start_ = true;
      first_line_ = false;
      continue;
    }
    if (c == '\r') {
      after_cr_ = true;
      continue;
    }
    if (at_line_start_ && (c == ' ' || c == '\t'))
      return refuse(std::string("a header line beginning with ") + (c == ' ' ? "a space" : "a tab") +
                    " (obs-fold: the server does not unfold lines)");
    at_line_start_ = false;
  }
}

}  // namespace ferry::serve
