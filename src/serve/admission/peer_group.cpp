#include "serve/admission/peer_group.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstdint>

namespace ferry::serve {
namespace {

// Clears every bit past the first `prefix` of `bytes`.
template <std::size_t N>
void keep_prefix(std::array<std::uint8_t, N>& bytes, int prefix) {
  const int bits = std::clamp(prefix, 0, static_cast<int>(N * 8));
  for (std::size_t i = 0; i < N; ++i) {
    const int kept = std::clamp(bits - static_cast<int>(i * 8), 0, 8);
    bytes[i] &= static_cast<std::uint8_t>(0xff00U >> kept);
  }
}

std::string ipv4_group(std::array<std::uint8_t, 4> bytes, int prefix) {
  keep_prefix(bytes, prefix);
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, bytes.data(), text, sizeof text);
  return std::string(text) + "/" + std::to_string(std::clamp(prefix, 0, 32));
}

}  // namespace

std::string peer_group(std::string_view address, int ipv4_prefix, int ipv6_prefix) {
  const std::string text(address);
  std::array<std::uint8_t, 4> v4{};
  if (::inet_pton(AF_INET, text.c_str(), v4.data()) == 1) return ipv4_group(v4, ipv4_prefix);
  std::array<std::uint8_t, 16> v6{};
  if (::inet_pton(AF_INET6, text.c_str(), v6.data()) != 1) return text;
  // ::ffff:a.b.c.d: an IPv4 client of a dual-stack socket.
  constexpr std::array<std::uint8_t, 12> mapped{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::equal(mapped.begin(), mapped.end(), v6.begin()))
    return ipv4_group({v6[12], v6[13], v6[14], v6[15]}, ipv4_prefix);
  keep_prefix(v6, ipv6_prefix);
  char out[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET6, v6.data(), out, sizeof out);
  return std::string(out) + "/" + std::to_string(std::clamp(ipv6_prefix, 0, 128));
}

}  // namespace ferry::serve
