#include "serve/vocabulary/peer_identity.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "serve/vocabulary/socket_lookup.hpp"

namespace ferry::serve {
namespace {

// The first 12 bytes of an IPv4 address mapped into IPv6 (::ffff:a.b.c.d).
constexpr std::array<std::uint8_t, 12> v4_mapped_prefix{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

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
  if (::inet_pton(AF_INET, peer.address.c_str(), v4.data()) != 1) {
    if (::inet_pton(AF_INET6, peer.address.c_str(), v6.data()) != 1) return {};
    if (!std::equal(v4_mapped_prefix.begin(), v4_mapped_prefix.end(), v6.begin()))
      return {table_endpoint(v6.data(), 16, peer.port)};
    std::copy(v6.begin() + 12, v6.end(), v4.begin());
  }
  std::copy(v4_mapped_prefix.begin(), v4_mapped_prefix.end(), v6.begin());
  std::copy(v4.begin(), v4.end(), v6.begin() + 12);
  return {table_endpoint(v4.data(), 4, peer.port), table_endpoint(v6.data(), 16, peer.port)};
}

// An IPv6 address of gRPC's peer text without its brackets: "[::1]", or "%5B::1%5D" as newer gRPC
// releases write it (URI-escaped); none when it has neither.
std::optional<std::string_view> unbracketed(std::string_view address) {
  if (address.size() >= 6 && address.starts_with("%5B") && address.ends_with("%5D"))
    return address.substr(3, address.size() - 6);
  if (address.size() >= 2 && address.front() == '[' && address.back() == ']')
    return address.substr(1, address.size() - 2);
  return std::nullopt;
}

// A connection's states that name no user: TIME_WAIT (6) and NEW_SYN_RECV (12) are the kernel's
// small records of a socket, given uid 0 whoever made it.
constexpr unsigned time_wait = 6;
constexpr unsigned new_syn_recv = 12;
bool names_its_user(unsigned state) { return state != time_wait && state != new_syn_recv; }
bool names_its_user(std::string_view state) {
  return names_its_user(static_cast<unsigned>(std::strtoul(std::string(state).c_str(), nullptr, 16)));
}

// The uid of every row of `table` (socket states that name their user only) whose local end is
// the client's address and port and whose remote port is the server's.
void collect_socket_owners(std::string_view table, const peer_endpoint& peer, std::vector<unsigned>& owners) {
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
    if (!names_its_user(state) || std::find(forms.begin(), forms.end(), local) == forms.end()) continue;
    if (remote.size() < remote_port.size() ||
        remote.compare(remote.size() - remote_port.size(), remote_port.size(), remote_port) != 0)
      continue;
    owners.push_back(uid);
  }
}

// The one user all matching rows name; none when there is no row, or when rows disagree. Two
// sockets may share a local address and port (SO_REUSEADDR, each connected elsewhere): one of
// another user, connected to a server on the same port of another address, must not lend its
// user to this client.
std::optional<unsigned> agreed_owner(const std::vector<unsigned>& owners) {
  if (owners.empty()) return std::nullopt;
  if (std::any_of(owners.begin(), owners.end(), [&](unsigned uid) { return uid != owners.front(); }))
    return std::nullopt;
  return owners.front();
}

}  // namespace

std::optional<unsigned> find_socket_owner(std::string_view table, const peer_endpoint& peer) {
  std::vector<unsigned> owners;
  collect_socket_owners(table, peer, owners);
  return agreed_owner(owners);
}

namespace {

// An address and port as the kernel's lookup takes them: an IPv4 or v4-mapped address as IPv4
// (the kernel files a dual-stack socket's IPv4 connection under its IPv4 ends).
std::optional<tcp_endpoint> lookup_endpoint(const std::string& address, std::uint16_t port) {
  tcp_endpoint end{.ipv6 = false, .address = {}, .port = port};
  if (::inet_pton(AF_INET, address.c_str(), end.address.data()) == 1) return end;
  if (::inet_pton(AF_INET6, address.c_str(), end.address.data()) != 1) return std::nullopt;
  if (!std::equal(v4_mapped_prefix.begin(), v4_mapped_prefix.end(), end.address.begin())) {
    end.ipv6 = true;
    return end;
  }
  std::copy(end.address.begin() + 12, end.address.end(), end.address.begin());
  std::fill(end.address.begin() + 4, end.address.end(), std::uint8_t{0});
  return end;
}

bool is_loopback(const tcp_endpoint& end) {
  constexpr std::array<std::uint8_t, 16> loopback6{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return end.ipv6 ? end.address == loopback6 : end.address[0] == 127;
}

// This machine's addresses of one family (its network namespace's, as its interfaces hold them).
std::vector<std::array<std::uint8_t, 16>> machine_addresses(bool ipv6) {
  std::vector<std::array<std::uint8_t, 16>> found;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return found;
  for (const ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != (ipv6 ? AF_INET6 : AF_INET)) continue;
    std::array<std::uint8_t, 16> address{};
    if (ipv6)
      std::memcpy(address.data(), &reinterpret_cast<const sockaddr_in6*>(a->ifa_addr)->sin6_addr, 16);
    else
      std::memcpy(address.data(), &reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr, 4);
    if (std::find(found.begin(), found.end(), address) == found.end()) found.push_back(address);
  }
  ::freeifaddrs(list);
  return found;
}

// Where else the server's end of a connection may be when the front end does not know it (gRPC's
// peer text names the client's end only), after the client's own address (the kernel's choice of
// source for a local destination, tried first): another of this machine's addresses. A client at
// an address that is not this machine's has no socket here.
std::vector<tcp_endpoint> other_server_ends(const tcp_endpoint& client, std::uint16_t server_port) {
  const auto addresses = machine_addresses(client.ipv6);
  if (!is_loopback(client) && std::find(addresses.begin(), addresses.end(), client.address) == addresses.end())
    return {};
  std::vector<tcp_endpoint> ends;
  for (const auto& address : addresses)
    if (address != client.address) ends.push_back({.ipv6 = client.ipv6, .address = address, .port = server_port});
  return ends;
}

// Every row of both tables: the client's socket is in one of them, and a row elsewhere with the
// same ends must agree with it. Their cost grows with the machine's sockets: only where the
// exact lookup cannot answer.
std::optional<unsigned> owner_from_tables(const peer_endpoint& peer) {
  std::vector<unsigned> owners;
  for (const char* file : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(file);
    if (!in) continue;
    std::stringstream text;
    text << in.rdbuf();
    collect_socket_owners(text.str(), peer, owners);
  }
  return agreed_owner(owners);
}

// The client's socket connected to `server`: its user, nothing, or the tables' answer where the
// kernel offers no lookup.
std::optional<peer_user> look_up_peer(const tcp_endpoint& client, const tcp_endpoint& server,
                                      const peer_endpoint& peer) {
  const socket_lookup found = look_up_tcp_socket(client, server);
  switch (found.outcome) {
    case lookup_outcome::unavailable:
      return peer_user{.uid = owner_from_tables(peer), .from_tables = true};
    case lookup_outcome::found:
      if (!names_its_user(found.socket.state)) return peer_user{};
      return peer_user{.uid = found.socket.uid, .from_tables = false};
    case lookup_outcome::no_such_socket:
      break;
  }
  return std::nullopt;
}

}  // namespace

peer_user find_peer_user(const peer_endpoint& peer) {
  const auto client = lookup_endpoint(peer.address, peer.port);
  if (!client) return {};
  if (!peer.server_address.empty()) {
    const auto server = lookup_endpoint(peer.server_address, peer.server_port);
    if (!server || server->ipv6 != client->ipv6) return {};
    return look_up_peer(*client, *server, peer).value_or(peer_user{});
  }
  // One exact lookup in the common case; the machine's other addresses only when it misses.
  const tcp_endpoint same{.ipv6 = client->ipv6, .address = client->address, .port = peer.server_port};
  if (auto found = look_up_peer(*client, same, peer)) return *found;
  for (const tcp_endpoint& server : other_server_ends(*client, peer.server_port))
    if (auto found = look_up_peer(*client, server, peer)) return *found;
  return {};
}

std::optional<unsigned> local_peer_uid(const peer_endpoint& peer) { return find_peer_user(peer).uid; }

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
    const auto bare = unbracketed(address);
    if (!bare) return std::nullopt;
    address = *bare;
  }
  unsigned port = 0;
  for (const char c : rest.substr(colon + 1)) {
    if (c < '0' || c > '9' || port > 65535) return std::nullopt;
    port = port * 10 + static_cast<unsigned>(c - '0');
  }
  if (port == 0 || port > 65535) return std::nullopt;
  return peer_endpoint{std::string(address), static_cast<std::uint16_t>(port), server_port, {}};
}

}  // namespace ferry::serve
