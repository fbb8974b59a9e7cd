#include "serve/transport/listen_addresses.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>

namespace ferry::serve {

std::vector<std::string> interface_addresses(bool ipv6) {
  std::vector<std::string> v4, v6;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return {};
  for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || (i->ifa_flags & IFF_UP) == 0) continue;
    char text[INET6_ADDRSTRLEN] = {};
    if (i->ifa_addr->sa_family == AF_INET) {
      ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
      v4.emplace_back(text);
    } else if (ipv6 && i->ifa_addr->sa_family == AF_INET6) {
      ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr, text, sizeof text);
      v6.emplace_back(text);
    }
  }
  ::freeifaddrs(list);
  for (auto* addresses : {&v4, &v6}) {
    std::sort(addresses->begin(), addresses->end());
    addresses->erase(std::unique(addresses->begin(), addresses->end()), addresses->end());
  }
  v4.insert(v4.end(), v6.begin(), v6.end());
  return v4;
}

std::string describe_listening(const std::string& host) {
  if (host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0) return "this machine only";
  if (host != "0.0.0.0" && host != "::" && !host.empty()) return "the interface of this address";
  std::string text = "every interface of this machine";
  const auto addresses = interface_addresses(host == "::");
  for (std::size_t i = 0; i < addresses.size(); ++i) text += (i == 0 ? ": " : ", ") + addresses[i];
  return text;
}

}  // namespace ferry::serve
