#include "serve/admission/peer_shares.hpp"

#include <algorithm>

namespace ferry::serve {

std::size_t peer_shares::held(std::string_view group) const {
  if (group.empty()) return 0;
  const auto it = held_.find(std::string(group));
  return it == held_.end() ? 0 : it->second;
}

bool peer_shares::fits(std::string_view group, std::size_t bytes, std::size_t share) const {
  if (group.empty()) return true;
  const std::size_t now = held(group);
  return now <= share && bytes <= share - now;
}

void peer_shares::add(std::string_view group, std::size_t bytes) {
  if (group.empty() || bytes == 0) return;
  held_[std::string(group)] += bytes;
}

void peer_shares::remove(std::string_view group, std::size_t bytes) {
  if (group.empty() || bytes == 0) return;
  const auto it = held_.find(std::string(group));
  if (it == held_.end()) return;
  it->second -= std::min(it->second, bytes);
  if (it->second == 0) held_.erase(it);
}

}  // namespace ferry::serve
