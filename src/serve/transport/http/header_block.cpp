#include "serve/transport/http/header_block.hpp"

namespace ferry::serve {

void header_block_scanner::refuse(const std::string& what) {
  refusal_ = "malformed HTTP request: " + what + " at byte " + std::to_string(scanned_) + " of its head";
}

void header_block_scanner::scan(std::string_view head) {
  for (; scanned_ < head.size() && !end_ && !refusal_; ++scanned_) take(head[scanned_]);
}

void header_block_scanner::take(char c) {
  if (after_cr_ && c != '\n') return refuse("a CR not followed by LF");
  if (c == '\0') return refuse("a NUL byte");
  if (c == '\r') {
    after_cr_ = true;
    return;
  }
  if (c == '\n') return end_line();
  if (at_line_start_ && (c == ' ' || c == '\t'))
    return refuse(std::string("a header line beginning with ") + (c == ' ' ? "a space" : "a tab") +
                  " (obs-fold: the server does not unfold lines)");
  at_line_start_ = false;
}

void header_block_scanner::end_line() {
  if (!after_cr_) return refuse("a line ended by LF alone, not CRLF");
  after_cr_ = false;
  // An empty line ends the head (an empty first line is no request line: the parser says so).
  if (at_line_start_ && !first_line_) end_ = scanned_ + 1;
  at_line_start_ = true;
  first_line_ = false;
}

}  // namespace ferry::serve
