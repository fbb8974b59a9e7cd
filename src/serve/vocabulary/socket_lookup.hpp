// One TCP socket of this machine found by its four ends through the kernel's socket diagnostics
// (netlink NETLINK_SOCK_DIAG, an exact lookup, as `ss` asks for one socket): the kernel looks
// the ends up in its connection hash, so the cost does not grow with the machine's sockets.
// Reading /proc/net/tcp instead walks every bucket of that hash and prints every socket: on a
// GPU host with a large hash it cost milliseconds on every request that used shared memory.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

namespace ferry::serve {

// A TCP endpoint as the kernel's lookup takes it: IPv4 (the first 4 bytes) or IPv6.
struct tcp_endpoint {
  bool ipv6 = false;
  std::array<std::uint8_t, 16> address{};
  std::uint16_t port = 0;
};

// What the lookup found of a socket.
struct socket_found {
  unsigned uid = 0;
  std::uint8_t state = 0;  // the kernel's TCP state (1 ESTABLISHED ... 6 TIME_WAIT, 12 NEW_SYN_RECV)
};

enum class lookup_outcome {
  found,
  no_such_socket,  // the kernel has no socket with these ends
  unavailable,     // the lookup itself failed (no netlink here, refused by a sandbox)
};

struct socket_lookup {
  lookup_outcome outcome = lookup_outcome::unavailable;
  socket_found socket;
};

// The connected socket whose local end is `local` and whose remote end is `remote`. A listening
// socket on `local`, which the kernel's lookup may fall back to, is not an answer.
[[nodiscard]] socket_lookup look_up_tcp_socket(const tcp_endpoint& local, const tcp_endpoint& remote);

}  // namespace ferry::serve
