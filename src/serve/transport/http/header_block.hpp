// The raw bytes of a request's head (its request line and header fields, up to the empty line),
// checked as they arrive and before any parser reads them, for what a parser could read in more
// than one way (RFC 9112 §2.2, §5.2, §11.2):
// - a line not ended by CRLF (a bare LF or a bare CR): some servers and proxies end a line there,
//   others do not, so the two see different header fields;
// - a NUL byte: some implementations end the text there;
// - obs-fold (a line starting with SP or HTAB, which continues the one before): folded into one
//   value by some, read as a field of its own, or dropped, by others. "Transfer-Encoding:\r\n
//   chunked" is chunked to one reader and no coding at all to another. RFC 9112 lets a server
//   refuse it with 400, and that is what this server does.
// Beast's parser already refuses bare line ends and NUL, and reads obs-fold as one value; checking
// the bytes first makes all three one refusal that names the problem, before the head is parsed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::serve {

class header_block_scanner {
 public:
  // Where the head ends (the offset just past its empty line), once seen.
  [[nodiscard]] std::optional<std::size_t> end() const noexcept { return end_; }
  // Why the head is refused, once a byte was found that it must not hold.
  [[nodiscard]] const std::optional<std::string>& refusal() const noexcept { return refusal_; }
  // How many of the head's bytes have been looked at.
  [[nodiscard]] std::size_t scanned() const noexcept { return scanned_; }

  // Looks at the bytes of `head` from scanned() on: `head` is every byte of the request received
  // so far, from its first (it may run past the head into the body). Stops at the head's end or
  // at the first byte refused.
  void scan(std::string_view head);

 private:
  void take(char c);                     // the byte at scanned_
  void end_line();                       // at an LF
  void refuse(const std::string& what);  // at the byte scanned_

  std::size_t scanned_ = 0;
  bool after_cr_ = false;      // the byte before was CR
  bool at_line_start_ = true;  // the byte before ended a line (or the head begins)
  bool first_line_ = true;     // the request line is being read
  std::optional<std::size_t> end_;
  std::optional<std::string> refusal_;
};

}  // namespace ferry::serve
