#include "serve/transport/http/route_pattern.hpp"

namespace ferry::serve {
namespace {

// The segments after each '/' of `path` ("/a//b" -> "a", "", "b"); nullopt without a leading '/'.
std::optional<std::vector<std::string_view>> split(std::string_view path) {
  if (path.empty() || path.front() != '/') return std::nullopt;
  std::vector<std::string_view> segments;
  std::size_t start = 1;
  for (;;) {
    const std::size_t slash = path.find('/', start);
    segments.push_back(path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) return segments;
    start = slash + 1;
  }
}

}  // namespace

route_pattern::route_pattern(std::string_view pattern) {
  for (const std::string_view s : split(pattern).value_or(std::vector<std::string_view>{}))
    segments_.push_back(s == "{}" ? segment{{}, true} : segment{std::string(s), false});
}

std::optional<std::vector<std::string>> route_pattern::match(std::string_view path) const {
  const auto segments = split(path);
  if (!segments || segments->size() != segments_.size()) return std::nullopt;
  std::vector<std::string> captures;
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    const std::string_view s = (*segments)[i];
    if (segments_[i].capture) {
      if (s.empty()) return std::nullopt;
      captures.emplace_back(s);
    } else if (s != segments_[i].text) {
      return std::nullopt;
    }
  }
  return captures;
}

}  // namespace ferry::serve
