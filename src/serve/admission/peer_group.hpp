// Which client network an address belongs to, for the connection caps: addresses that share
// their first `prefix` bits count as one peer. One party rarely holds a single address: a host
// has a /64 of IPv6 addresses to pick from, and a cloud tenant or a NAT pool often a run of IPv4
// ones. Capping per /24 and /64 by default (as rate limiters commonly do) keeps such a party to
// one peer's share.
#pragma once

#include <string>
#include <string_view>

namespace ferry::serve {

// "10.1.2.0/24" for 10.1.2.77 with an IPv4 prefix of 24; "2001:db8:0:1::/64" for
// 2001:db8::1:abcd with an IPv6 prefix of 64. An IPv4-mapped IPv6 address (::ffff:10.1.2.77)
// counts as its IPv4 address. Prefixes are clamped to the address's width (32 or 128: every
// address its own peer); text that is no address comes back as it is.
[[nodiscard]] std::string peer_group(std::string_view address, int ipv4_prefix, int ipv6_prefix);

}  // namespace ferry::serve
