// Route patterns matched one path segment at a time: the same routes and captures as the
// regular expressions they replace, in time linear in the path, whatever its length.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "serve/transport/http/route_pattern.hpp"

namespace {

using ferry::serve::route_pattern;
using captures = std::vector<std::string>;

TEST(ServeRoutePattern, MatchesLiteralPathsWhole) {
  const route_pattern live("/v2/health/live");
  EXPECT_EQ(live.match("/v2/health/live"), captures{});
  EXPECT_FALSE(live.match("/v2/health/live/"));
  EXPECT_FALSE(live.match("/v2/health"));
  EXPECT_FALSE(live.match("/v2/health/liveness"));
  EXPECT_FALSE(live.match("v2/health/live"));
  EXPECT_FALSE(live.match(""));
  EXPECT_EQ(route_pattern("/v2").match("/v2"), captures{});
  EXPECT_FALSE(route_pattern("/v2").match("/"));
}

TEST(ServeRoutePattern, CapturesOneNonEmptySegmentPerPlaceholder) {
  const route_pattern infer("/v2/models/{}/versions/{}/infer");
  EXPECT_EQ(infer.match("/v2/models/touch/versions/1/infer"), (captures{"touch", "1"}));
  EXPECT_FALSE(infer.match("/v2/models//versions/1/infer"));
  EXPECT_FALSE(infer.match("/v2/models/a/b/versions/1/infer"));
  EXPECT_FALSE(infer.match("/v2/models/touch/versions/1/infer/"));
  const route_pattern metadata("/v2/models/{}");
  EXPECT_EQ(metadata.match("/v2/models/stats"), captures{"stats"});
  EXPECT_EQ(metadata.match("/v2/models/a b%"), captures{"a b%"});
  EXPECT_FALSE(metadata.match("/v2/models/"));
  EXPECT_FALSE(metadata.match("/v2/models/a/"));
}

TEST(ServeRoutePattern, TakesPathsOfAnyLengthWithoutRecursing) {
  // A regular expression recursed once per character here and overflowed the stack.
  const std::string name(1'000'000, 'a');
  EXPECT_EQ(route_pattern("/v2/models/{}").match("/v2/models/" + name), captures{name});
  std::string slashes;
  for (int i = 0; i < 100'000; ++i) slashes += "/a";
  EXPECT_FALSE(route_pattern("/v2/models/{}").match(slashes));
}

}  // namespace
