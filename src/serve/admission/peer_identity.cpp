#include "serve/admission/peer_identity.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace ferry::serve {
namespace {

// An address as the kernel's tables print it: each 32-bit word of the address as it lies in
// memory, printed as a number in this machine's byte order (%08X), then ":" and the port (%04X).
std::string table_endpoint(const std::uint8_t* bytes, std::size_t size, std::uint16_t port) {
  std::string text;
  for (std::size_t word = 0; word < size; word += 4) {
    std::uint32_t value = 0;
    std::memcpy(&value, bytes + word, 4);
    text += fmt::format("{:08X}", value);
  }
  return text + fmt::format(":{:04X}", port);
}

// The client's local end as the tables may print it: an IPv4 client's socket is an IPv4 one
// (/proc/net/tcp) or an IPv6 one bound to the v4-mapped address (/proc/net/tcp6, what a
// dual-stack client makes); an IPv6 client's is in /proc/net/tcp6.
std::vector<std::string> local_forms(const peer_endpoint& peer) {
  std::array<std::uint8_t, 16> v6{};
  std::array<std::uint8_t, 4> v4{};
  constexpr std::array<std::uint8_t, 12> mapped{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (::inet_pton(AF_INET, peer.address.c_str(), v4.data()) != 1) {
    if (::inet_pton(AF_INET6, peer.address.c_str(), v6.data()) != 1) return {};
    if (!std::equal(mapped.begin(), mapped.end(), v6.begin())) return {table_endpoint(v6.data(), 16, peer.port)};
    std::copy(v6.begin() + 12, v6.end(), v4.begin());
  }
  std::copy(mapped.begin(), mapped.end(), v6.begin());
  std::copy(v4.begin(), v4.end(), v6.begin() + 12);
  return {table_endpoint(v4.data(), 4, peer.port), table_endpoint(v6.data(), 16, peer.port)};
}

}  // namespace

std::optional<unsigned> find_socket_owner(std::string_view table, const peer_endpoint& peer) {
  const auto forms = local_forms(peer);
  const std::string remote_port = fmt::format(":{:04X}", peer.server_port);
  std::istringstream lines{std::string(table)};
  std::string line;
  std::getline(lines, line);  // the column names
  while (std::getline(lines, line)) {
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid ...
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits;
    unsigned uid = 0;
    if (!(fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid)) continue;
    if (std::find(forms.begin(), forms.end(), local) == forms.end()) continue;
    if (remote.size() < remote_port.size() ||
        remote.compare(remote.size() - remote_port.size(), remote_port.size(), remote_port) != 0)
      continue;
    return uid;
  }
  return std::nullopt;
}

std::optional<unsigned> local_peer_uid(const peer_endpoint& peer) {
  for (const char* file : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(file);
    if (!in) continue;
    std::stringstream text;
    text << in.rdbuf();
    if (const auto uid = find_socket_owner(text.str(), peer)) return uid;
  }
  return std::nullopt;
}

std::optional<peer_endpoint> parse_grpc_peer(std::string_view peer, std::uint16_t server_port) {
  std::string_view rest;
  bool v6 = false;
  if (peer.rfind("ipv4:", 0) == 0) {
    rest = peer.substr(5);
  } else if (peer.rfind("ipv6:", 0) == 0) {
    rest = peer.substr(5);
    v6 = true;
  } else {
    return std::nullopt;
  }
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view address = rest.substr(0, colon);
  if (v6) {
    if (address.size() < 2 || address.front() != '[' || address.back() != ']') return std::nullopt;
    address = address.substr(1, address.size() - 2);
  }
  unsigned port = 0;
  for (const char c : rest.substr(colon + 1)) {
    if (c < '0' || c > '9' || port > 65535) return std::nullopt;
    port = port * 10 + static_cast<unsigned>(c - '0');
  }
  if (port == 0 || port > 65535) return std::nullopt;
  return peer_endpoint{std::string(address), static_cast<std::uint16_t>(port), server_port};
}

}  // namespace ferry::serve
