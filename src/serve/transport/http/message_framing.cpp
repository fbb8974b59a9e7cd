#include "serve/transport/http/message_framing.hpp"

#include <strings.h>

#include <algorithm>
#include <string_view>

#include "serve/codec/client_json.hpp"

namespace ferry::serve {
namespace {

bool same_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The elements of a comma-separated field value, each without the whitespace around it.
std::vector<std::string_view> list_elements(std::string_view value) {
  std::vector<std::string_view> elements;
  for (;;) {
    const std::size_t comma = value.find(',');
    elements.push_back(trimmed(value.substr(0, comma)));
    if (comma == std::string_view::npos) return elements;
    value.remove_prefix(comma + 1);
  }
}

std::vector<std::string_view> values_of(const std::vector<std::pair<std::string, std::string>>& headers,
                                        std::string_view name) {
  std::vector<std::string_view> values;
  for (const auto& [key, value] : headers)
    if (same_ignoring_case(key, name)) values.emplace_back(value);
  return values;
}

framing_refusal bad(std::string message) { return {400, std::move(message)}; }

// The one Transfer-Encoding value a request may carry: "chunked".
std::optional<framing_refusal> transfer_coding_refusal(std::string_view value) {
  const std::string quoted = "Transfer-Encoding '" + quote_text(value) + "'";
  const auto codings = list_elements(value);
  if (std::any_of(codings.begin(), codings.end(), [](std::string_view c) { return c.empty(); }))
    return bad(quoted + " holds an empty coding: send 'chunked' alone");
  if (!same_ignoring_case(codings.back(), "chunked"))
    return bad(quoted + " does not end with chunked, so the body's length cannot be told: send 'chunked' alone");
  if (codings.size() == 1) return std::nullopt;
  const auto other = std::find_if(codings.begin(), codings.end() - 1,
                                  [](std::string_view c) { return !same_ignoring_case(c, "chunked"); });
  if (other == codings.end() - 1) return bad(quoted + " applies chunked more than once: send 'chunked' alone");
  return framing_refusal{501, quoted + ": the transfer coding '" + quote_text(*other) +
                                  "' is not implemented by this server: send the body 'chunked' alone"};
}

std::optional<framing_refusal> content_length_refusal(const std::vector<std::string_view>& lengths) {
  if (lengths.size() > 1) return bad("Content-Length given " + std::to_string(lengths.size()) + " times: give it once");
  const std::string_view length = trimmed(lengths.front());
  if (length.empty() || !std::all_of(length.begin(), length.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return bad("Content-Length '" + quote_text(lengths.front()) + "' is not a number of bytes");
  return std::nullopt;
}

}  // namespace

std::optional<framing_refusal> framing_refusal_of(unsigned version,
                                                  const std::vector<std::pair<std::string, std::string>>& headers) {
  const auto codings = values_of(headers, "Transfer-Encoding");
  const auto lengths = values_of(headers, "Content-Length");
  if (codings.empty()) return lengths.empty() ? std::nullopt : content_length_refusal(lengths);
  if (version < 11) return bad("Transfer-Encoding in an HTTP/1.0 request: its framing cannot be trusted");
  if (!lengths.empty())
    return bad("both Transfer-Encoding and Content-Length: the body's length is ambiguous; send one of them");
  if (codings.size() > 1)
    return bad("Transfer-Encoding given " + std::to_string(codings.size()) + " times: give it once, as 'chunked'");
  return transfer_coding_refusal(codings.front());
}

}  // namespace ferry::serve
