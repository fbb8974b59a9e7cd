// What each client network (peer_group.hpp) holds of the in-flight budget, so that one network
// cannot take all of it: bytes it has sent that are still held (a body as it arrives, a request
// being run) and the answers being made for it. A network may hold at most its share at once (by
// default a quarter of what requests are admitted into), so three others can still be served
// whatever one does. Plain data: request_intake keeps it under its lock.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ferry::serve {

class peer_shares {
 public:
  // What `group` holds now (0 for a network holding nothing, or no network: "").
  [[nodiscard]] std::size_t held(std::string_view group) const;
  // Whether `group` may take `bytes` more and stay within `share`. Always for no network ("").
  [[nodiscard]] bool fits(std::string_view group, std::size_t bytes, std::size_t share) const;
  void add(std::string_view group, std::size_t bytes);
  // Gives back what `group` took; a network holding nothing is forgotten.
  void remove(std::string_view group, std::size_t bytes);
  // How many networks hold something.
  [[nodiscard]] std::size_t networks() const noexcept { return held_.size(); }

 private:
  std::unordered_map<std::string, std::size_t> held_;
};

}  // namespace ferry::serve
