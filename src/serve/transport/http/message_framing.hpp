// How a request's body is delimited, held to RFC 9112 §6 with no leeway: a reader that frames a
// message differently from the proxy in front of it runs the rest of the body as a request of its
// own (request smuggling, RFC 9112 §11.2). So every request whose framing two readers could tell
// apart is refused, and its connection closed, before any of its body is read:
// - Transfer-Encoding must be exactly `chunked` (any letter case), given once: a coding list that
//   does not end with chunked leaves the body's length unknown (400); chunked after a coding this
//   server does not implement, such as gzip or identity, gets 501; chunked twice, an empty list, or
//   Transfer-Encoding given in two fields, 400. An HTTP/1.0 request may carry none (400).
// - Content-Length beside Transfer-Encoding: 400. Content-Length must be one field of digits
//   only: a list ("5, 5"), a second field, a sign, anything else is 400.
// Header bytes no parser agrees on (bare LF or CR, NUL, obs-fold) are refused before this, by
// header_block_scanner; chunk extensions and trailers are bounded by the transport.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ferry::serve {

struct framing_refusal {
  int status = 400;  // 400, or 501 for a transfer coding the server does not implement
  std::string message;
};

// The most bytes of chunk extensions one chunk line may carry: extensions have no use here, and
// without a bound a client could make the server hold a chunk line of any length.
inline constexpr std::size_t max_chunk_extension_bytes = 4096;

// Why a request with these header fields (as received, in order) and HTTP version (10 or 11) must
// be refused, if it must.
[[nodiscard]] std::optional<framing_refusal> framing_refusal_of(
    unsigned version, const std::vector<std::pair<std::string, std::string>>& headers);

}  // namespace ferry::serve
