#include "serve/vocabulary/socket_lookup.hpp"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ferry::serve {
namespace {

// A netlink socket, closed when it goes.
class netlink_socket {
 public:
  netlink_socket() : fd_(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) {}
  ~netlink_socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  netlink_socket(const netlink_socket&) = delete;
  netlink_socket& operator=(const netlink_socket&) = delete;
  [[nodiscard]] int fd() const { return fd_; }

 private:
  int fd_;
};

struct diag_request {
  nlmsghdr header;
  inet_diag_req_v2 body;
};

void put_end(const tcp_endpoint& end, __be32* address, __be16& port) {
  std::memcpy(address, end.address.data(), end.ipv6 ? 16 : 4);
  port = htons(end.port);
}

diag_request request_for(const tcp_endpoint& local, const tcp_endpoint& remote) {
  diag_request r{};
  r.header.nlmsg_len = sizeof r;
  r.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  r.header.nlmsg_flags = NLM_F_REQUEST;  // one socket, no dump
  r.body.sdiag_family = local.ipv6 ? AF_INET6 : AF_INET;
  r.body.sdiag_protocol = IPPROTO_TCP;
  r.body.idiag_states = ~0U;
  put_end(local, r.body.id.idiag_src, r.body.id.idiag_sport);
  put_end(remote, r.body.id.idiag_dst, r.body.id.idiag_dport);
  r.body.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  r.body.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  return r;
}

// An address of the kernel's answer as the lookup takes it: a dual-stack (IPv6) socket connected
// to an IPv4 address is found by its IPv4 ends, and answered with them v4-mapped.
const std::uint8_t* as_asked(const __be32* address, std::uint8_t family, bool ipv6) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(address);
  constexpr std::uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (!ipv6 && family == AF_INET6 && std::memcmp(bytes, mapped, sizeof mapped) == 0) return bytes + 12;
  return bytes;
}

// The kernel's answer is the asked socket only when its ends are the asked ones: a lookup that
// finds no connection may answer with a socket listening on the local end.
bool same_ends(const inet_diag_msg& got, const inet_diag_sockid& asked, bool ipv6) {
  const std::size_t bytes = ipv6 ? 16 : 4;
  return got.id.idiag_sport == asked.idiag_sport && got.id.idiag_dport == asked.idiag_dport &&
         std::memcmp(as_asked(got.id.idiag_src, got.idiag_family, ipv6), asked.idiag_src, bytes) == 0 &&
         std::memcmp(as_asked(got.id.idiag_dst, got.idiag_family, ipv6), asked.idiag_dst, bytes) == 0;
}

constexpr std::uint8_t tcp_listen = 10;

socket_lookup read_answer(int fd, const diag_request& asked, bool ipv6) {
  alignas(nlmsghdr) char buffer[8192];
  const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
  if (got <= 0) return {};
  auto left = static_cast<unsigned>(got);
  for (auto* h = reinterpret_cast<nlmsghdr*>(buffer); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
    if (h->nlmsg_type == NLMSG_ERROR) {
      const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
      if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(nlmsgerr)) && e->error == -ENOENT)
        return {.outcome = lookup_outcome::no_such_socket, .socket = {}};
      return {};
    }
    if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg))) continue;
    const auto* m = static_cast<const inet_diag_msg*>(NLMSG_DATA(h));
    if (m->idiag_state == tcp_listen || !same_ends(*m, asked.body.id, ipv6))
      return {.outcome = lookup_outcome::no_such_socket, .socket = {}};
    return {.outcome = lookup_outcome::found, .socket = {.uid = m->idiag_uid, .state = m->idiag_state}};
  }
  return {};
}

}  // namespace

socket_lookup look_up_tcp_socket(const tcp_endpoint& local, const tcp_endpoint& remote) {
  if (local.ipv6 != remote.ipv6) return {.outcome = lookup_outcome::no_such_socket, .socket = {}};
  const netlink_socket s;
  if (s.fd() < 0) return {};
  // The kernel answers while sending returns; the bound only guards against a kernel that does not.
  const timeval bound{.tv_sec = 1, .tv_usec = 0};
  ::setsockopt(s.fd(), SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
  const diag_request r = request_for(local, remote);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(s.fd(), &r, sizeof r, 0, reinterpret_cast<const sockaddr*>(&kernel), sizeof kernel) !=
      static_cast<ssize_t>(sizeof r))
    return {};
  return read_answer(s.fd(), r, local.ipv6);
}

}  // namespace ferry::serve
