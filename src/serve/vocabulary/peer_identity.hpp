// Which user a client is, when it is a process of this machine: the owner of its TCP socket, as
// the kernel knows it: looked up by the connection's four ends (socket_lookup.hpp), or, where
// that cannot answer, found in the socket tables (/proc/net/tcp, /proc/net/tcp6). A client
// elsewhere has no socket here. The server listens on TCP only, so SO_PEERCRED (a Unix socket's
// credentials) does not apply; the kernel gives the same answer for a loopback or local-address
// client, in the server's network namespace (a container's peers are those of its pod or its own).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::serve {

// The client's end of a connection, and the server's port it reached.
struct peer_endpoint {
  std::string address;  // "127.0.0.1", "::1", "::ffff:127.0.0.1"
  std::uint16_t port = 0;
  std::uint16_t server_port = 0;
  std::string server_address;  // the server's end of the connection; "" when unknown (gRPC's peer)
};

// The uid owning the client's socket, when the client runs on this machine; nothing otherwise
// (or when the kernel cannot tell). With the server's end unknown, the client's socket is looked
// for as connected to each of this machine's addresses, its own first: a client that reached the
// server at an address no interface holds (127.0.0.5 from 127.0.0.1) is not found.
[[nodiscard]] std::optional<unsigned> local_peer_uid(const peer_endpoint& peer);

// The same, saying how it was found: by exact lookups, or from the tables (the kernel's socket
// diagnostics unavailable here), whose reading walks the kernel's whole connection hash
// (milliseconds a read, however few sockets are open).
struct peer_user {
  std::optional<unsigned> uid;
  bool from_tables = false;
};
[[nodiscard]] peer_user find_peer_user(const peer_endpoint& peer);

// The same, over the text of one table (/proc/net/tcp or /proc/net/tcp6): the uid of the socket
// whose local end is the client's address and port and whose remote port is the server's. Rows
// that name no user (TIME_WAIT, printed with uid 0) are passed over; when several rows match and
// name different users, none is answered (the client cannot be told).
[[nodiscard]] std::optional<unsigned> find_socket_owner(std::string_view table, const peer_endpoint& peer);

// gRPC's peer text ("ipv4:127.0.0.1:5000", "ipv6:[::1]:5000", "ipv6:%5B::1%5D:5000") as an
// endpoint; nothing for any other kind of peer.
[[nodiscard]] std::optional<peer_endpoint> parse_grpc_peer(std::string_view peer, std::uint16_t server_port);

}  // namespace ferry::serve
