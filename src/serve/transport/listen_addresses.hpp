// Who can reach a server listening on an address, said at start: a wildcard address listens on
// every interface of the machine (a server reachable from the network, named by the interfaces'
// addresses), a loopback address on this machine only. `ferry serve` listens on 127.0.0.1 unless
// told otherwise (the container image binds 0.0.0.0 explicitly).
#pragma once

#include <string>
#include <vector>

namespace ferry::serve {

// "this machine only" (127.0.0.1, ::1, localhost), "every interface of this machine: 127.0.0.1,
// 10.0.0.5, ..." (0.0.0.0; :: adds the IPv6 ones), or "the interface of this address".
[[nodiscard]] std::string describe_listening(const std::string& host);

// The addresses of this machine's interfaces that are up, IPv4 first; with `ipv6` the IPv6 ones too.
[[nodiscard]] std::vector<std::string> interface_addresses(bool ipv6);

}  // namespace ferry::serve
