// Request paths matched against route patterns one segment at a time, such as
// "/v2/models/{}/versions/{}/infer", where each "{}" captures one non-empty segment.
//
// No regular expressions: std::regex_match recurses once per character of the subject, so a long
// path overflows the stack. Splitting on '/' takes time and memory linear in the path's length.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::serve {

class route_pattern {
 public:
  // `pattern` starts with '/'; "{}" as a whole segment captures that segment of a path.
  explicit route_pattern(std::string_view pattern);

  // The captured segments, in order, when `path` matches the whole pattern; nullopt otherwise.
  [[nodiscard]] std::optional<std::vector<std::string>> match(std::string_view path) const;

 private:
  struct segment {
    std::string text;  // the literal to match, when not a capture
    bool capture = false;
  };
  std::vector<segment> segments_;  // what follows each '/'
};

}  // namespace ferry::serve
