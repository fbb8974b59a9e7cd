// Standard base64 (RFC 4648, with padding), as the HTTP CUDA shared-memory extension sends raw
// handles.
#pragma once

#include <string>
#include <string_view>

namespace ferry::serve {

// Decodes `text`; whitespace in it is layout (Triton's C++ clients break lines every 72
// characters). Throws request_error(bad_request) for malformed text.
[[nodiscard]] std::string decode_base64(std::string_view text);

}  // namespace ferry::serve
