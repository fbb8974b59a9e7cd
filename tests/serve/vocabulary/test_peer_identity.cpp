// Who a client of this machine is, found from its live socket: by the connection's four ends
// through the kernel's socket diagnostics (one lookup whatever the machine's socket count), the
// socket tables only where the kernel does not offer that.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "serve/vocabulary/peer_identity.hpp"
#include "serve/vocabulary/socket_lookup.hpp"

namespace {

using namespace ferry::serve;

// A socket descriptor, closed when it goes.
class fd_guard {
 public:
  explicit fd_guard(int fd) : fd_(fd) {}
  ~fd_guard() {
    if (fd_ >= 0) ::close(fd_);
  }
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

sockaddr_in loopback(const char* address, std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, address, &a.sin_addr);
  return a;
}

sockaddr_in bound_address(int fd) {
  sockaddr_in a{};
  socklen_t length = sizeof a;
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &length), 0);
  return a;
}

// A server listening on 127.0.0.1 and a client connected to it, from `client_address`.
struct loopback_connection {
  fd_guard server{::socket(AF_INET, SOCK_STREAM, 0)};
  fd_guard client{::socket(AF_INET, SOCK_STREAM, 0)};
  sockaddr_in server_end{};
  sockaddr_in client_end{};

  explicit loopback_connection(const char* client_address = "127.0.0.1") {
    const sockaddr_in any_port = loopback("127.0.0.1", 0);
    EXPECT_EQ(::bind(server.get(), reinterpret_cast<const sockaddr*>(&any_port), sizeof any_port), 0);
    EXPECT_EQ(::listen(server.get(), 1), 0);
    server_end = bound_address(server.get());
    const sockaddr_in from = loopback(client_address, 0);
    EXPECT_EQ(::bind(client.get(), reinterpret_cast<const sockaddr*>(&from), sizeof from), 0);
    EXPECT_EQ(::connect(client.get(), reinterpret_cast<const sockaddr*>(&server_end), sizeof server_end), 0);
    client_end = bound_address(client.get());
  }
  [[nodiscard]] std::uint16_t client_port() const { return ntohs(client_end.sin_port); }
  [[nodiscard]] std::uint16_t server_port() const { return ntohs(server_end.sin_port); }
};

tcp_endpoint end_of(const sockaddr_in& a) {
  tcp_endpoint e{.ipv6 = false, .address = {}, .port = ntohs(a.sin_port)};
  std::memcpy(e.address.data(), &a.sin_addr, 4);
  return e;
}

TEST(ServePeerIdentity, LooksUpOneSocketByItsEnds) {
  const loopback_connection c;
  const auto found = look_up_tcp_socket(end_of(c.client_end), end_of(c.server_end));
  if (found.outcome == lookup_outcome::unavailable)
    GTEST_SKIP() << "this machine refuses the kernel's socket diagnostics (netlink NETLINK_SOCK_DIAG): "
                    "the tables answer instead, as the tests below check";
  ASSERT_EQ(found.outcome, lookup_outcome::found);
  EXPECT_EQ(found.socket.uid, ::getuid());
  EXPECT_EQ(found.socket.state, 1U);  // ESTABLISHED
  // The server's side of the same connection is another socket, of the same user.
  EXPECT_EQ(look_up_tcp_socket(end_of(c.server_end), end_of(c.client_end)).outcome, lookup_outcome::found);
  // No connection between these ends: neither the listener on the server's end nor any other.
  tcp_endpoint nobody = end_of(c.client_end);
  nobody.port = static_cast<std::uint16_t>(nobody.port == 65535 ? 1 : nobody.port + 1);
  EXPECT_EQ(look_up_tcp_socket(nobody, end_of(c.server_end)).outcome, lookup_outcome::no_such_socket);
  EXPECT_EQ(look_up_tcp_socket(end_of(c.server_end), nobody).outcome, lookup_outcome::no_such_socket);
}

// Whether this machine answers the kernel's socket lookup (a sandbox may refuse netlink).
bool exact_lookup_available() {
  const loopback_connection c;
  return look_up_tcp_socket(end_of(c.client_end), end_of(c.server_end)).outcome != lookup_outcome::unavailable;
}

// This process's own connection over loopback: its user, with the server's end known (as the
// HTTP server knows it) or not (gRPC's peer text gives only the client's), found by the exact
// lookup wherever the kernel offers it (the tables cost milliseconds a request on a busy host).
TEST(ServePeerIdentity, KnowsALoopbackClientsUser) {
  const loopback_connection c;
  const bool exact = exact_lookup_available();
  for (const std::string server : {"127.0.0.1", ""}) {
    SCOPED_TRACE("server's end '" + server + "'");
    const peer_user found = find_peer_user({"127.0.0.1", c.client_port(), c.server_port(), server});
    ASSERT_TRUE(found.uid.has_value());
    EXPECT_EQ(*found.uid, ::getuid());
    EXPECT_EQ(found.from_tables, !exact);
  }
  // A dual-stack server sees an IPv4 client at its v4-mapped address.
  EXPECT_EQ(local_peer_uid({"::ffff:127.0.0.1", c.client_port(), c.server_port(), "::ffff:127.0.0.1"}), ::getuid());
}

// gRPC's clients connect an IPv6 socket to an IPv4 address (::ffff:127.0.0.1): the kernel answers
// for it with v4-mapped ends, which are still the asked ones.
TEST(ServePeerIdentity, KnowsADualStackClientOfAnIpv4Server) {
  const loopback_connection c;  // its server, IPv4 on 127.0.0.1
  const fd_guard client(::socket(AF_INET6, SOCK_STREAM, 0));
  ASSERT_GE(client.get(), 0);
  sockaddr_in6 to{};
  to.sin6_family = AF_INET6;
  to.sin6_port = c.server_end.sin_port;
  ::inet_pton(AF_INET6, "::ffff:127.0.0.1", &to.sin6_addr);
  if (::connect(client.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0)
    GTEST_SKIP() << "this machine has no dual-stack sockets";
  sockaddr_in6 from{};
  socklen_t length = sizeof from;
  ASSERT_EQ(::getsockname(client.get(), reinterpret_cast<sockaddr*>(&from), &length), 0);
  const std::uint16_t port = ntohs(from.sin6_port);
  const bool exact = exact_lookup_available();
  for (const std::string address : {"127.0.0.1", "::ffff:127.0.0.1"}) {
    for (const std::string server : {"127.0.0.1", ""}) {
      SCOPED_TRACE(address + ", server's end '" + server + "'");
      const peer_user found = find_peer_user({address, port, c.server_port(), server});
      EXPECT_EQ(found.uid, ::getuid());
      EXPECT_EQ(found.from_tables, !exact);
    }
  }
}

// A client that bound another loopback address before connecting: with the server's end unknown,
// the lookup from the client's own address misses it, and the one to the machine's 127.0.0.1
// finds it.
TEST(ServePeerIdentity, KnowsAClientThatConnectedFromAnotherLocalAddress) {
  const loopback_connection c("127.0.0.2");
  EXPECT_EQ(local_peer_uid({"127.0.0.2", c.client_port(), c.server_port(), "127.0.0.1"}), ::getuid());
  EXPECT_EQ(local_peer_uid({"127.0.0.2", c.client_port(), c.server_port(), ""}), ::getuid());
}

TEST(ServePeerIdentity, AClientElsewhereHasNoUserHere) {
  const loopback_connection c;
  // TEST-NET-1 (RFC 5737): no address of this machine.
  EXPECT_FALSE(local_peer_uid({"192.0.2.7", c.client_port(), c.server_port(), "127.0.0.1"}).has_value());
  EXPECT_FALSE(local_peer_uid({"192.0.2.7", c.client_port(), c.server_port(), ""}).has_value());
  // This machine's client end, but no connection from it to the server's port asked.
  const auto other_port = static_cast<std::uint16_t>(c.server_port() == 65535 ? 1 : c.server_port() + 1);
  EXPECT_FALSE(local_peer_uid({"127.0.0.1", c.client_port(), other_port, "127.0.0.1"}).has_value());
  EXPECT_FALSE(local_peer_uid({"not an address", c.client_port(), c.server_port(), ""}).has_value());
}

}  // namespace
