// The config's key table (serve/config/config_keys.hpp): batch buckets and a latency target as
// any key is read and refused, every key of the table accepted and no other, and docs/USAGE.md's
// table of keys the one the code makes.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "ferry/core/error.hpp"
#include "serve/config/config_keys.hpp"
#include "serve/config/model_config.hpp"

namespace {

using ferry::serve::parse_model_config;

std::string failure(const std::string& text) {
  try {
    (void)parse_model_config(text, "m");
  } catch (const ferry::invalid_argument& e) {
    return e.what();
  }
  return "no exception";
}

TEST(ServeConfigKeys, BatchBucketsAndALatencyTargetAreRead) {
  const auto c = parse_model_config(
      R"({"engine": "torch:m.pt2", "max_batch": 64, "batch_buckets": [1, 4, 16, 64], "latency_target_ms": 5})", "m");
  EXPECT_EQ(c.batch_buckets, (std::vector<std::int64_t>{1, 4, 16, 64}));
  ASSERT_TRUE(c.latency_target.has_value());
  EXPECT_EQ(c.latency_target->count(), 5000);
  const auto fraction = parse_model_config(R"({"engine": "touch", "max_batch": 8, "latency_target_ms": 0.25})", "m");
  EXPECT_EQ(fraction.latency_target->count(), 250);
  const auto defaults = parse_model_config(R"({"engine": "touch", "max_batch": 8})", "m");
  EXPECT_TRUE(defaults.batch_buckets.empty());  // powers of two up to max_batch, at load
  EXPECT_FALSE(defaults.latency_target.has_value());
}

TEST(ServeConfigKeys, BucketMistakesAreNamed) {
  EXPECT_NE(failure(R"({"engine": "t", "max_batch": 16, "batch_buckets": [4, 2, 16]})").find("ascending"),
            std::string::npos);
  EXPECT_NE(failure(R"({"engine": "t", "max_batch": 16, "batch_buckets": [1, 1, 16]})").find("ascending"),
            std::string::npos);
  EXPECT_NE(failure(R"({"engine": "t", "max_batch": 16, "batch_buckets": [0, 16]})").find("at least 1"),
            std::string::npos);
  EXPECT_NE(failure(R"({"engine": "t", "max_batch": 16, "batch_buckets": "1,16"})").find("'batch_buckets' must be"),
            std::string::npos);
  EXPECT_NE(failure(R"({"engine": "t", "max_batch": 16, "batch_buckets": []})").find("'batch_buckets' must be"),
            std::string::npos);
  const std::string short_of_max = failure(R"({"engine": "t", "max_batch": 64, "batch_buckets": [1, 4, 16]})");
  EXPECT_NE(short_of_max.find("must end at 'max_batch' (64), not at 16"), std::string::npos) << short_of_max;
  EXPECT_NE(failure(R"({"engine": "t", "batch_buckets": [1]})").find("needs a batched model"), std::string::npos);
}

TEST(ServeConfigKeys, LatencyTargetMistakesAreNamed) {
  EXPECT_NE(
      failure(R"({"engine": "t", "max_batch": 8, "latency_target_ms": 0})").find("'latency_target_ms' must be in"),
      std::string::npos);
  EXPECT_NE(failure(R"({"engine": "t", "max_batch": 8, "latency_target_ms": "5"})").find("must be a number"),
            std::string::npos);
  EXPECT_NE(failure(R"({"engine": "t", "latency_target_ms": 5})").find("needs 'max_batch' above 0"), std::string::npos);
}

TEST(ServeConfigKeys, EveryKeyOfTheTableIsKnownAndTheErrorListsThemAll) {
  const std::string unknown = failure(R"({"engine": "touch", "bucket": [1]})");
  for (const auto& key : ferry::serve::config_keys()) {
    EXPECT_NE(unknown.find(std::string(key.name)), std::string::npos) << key.name << " missing from: " << unknown;
    EXPECT_FALSE(key.help.empty()) << key.name;
    EXPECT_FALSE(key.takes.empty()) << key.name;
    EXPECT_NE(key.read, nullptr) << key.name;
  }
  EXPECT_EQ(ferry::serve::config_keys().front().name, "engine");  // read first: others are checked against it
}

TEST(ServeConfigKeys, UsageHoldsTheTableTheCodeMakes) {
  std::ifstream in(std::string(FERRY_SOURCE_DIR) + "/docs/USAGE.md");
  ASSERT_TRUE(in) << "docs/USAGE.md not found";
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const std::string begin = "<!-- config keys: made by config_keys_markdown() -->\n";
  const std::string end = "<!-- end of config keys -->";
  const auto from = doc.find(begin);
  const auto to = doc.find(end);
  ASSERT_NE(from, std::string::npos) << "docs/USAGE.md lacks the marker " << begin;
  ASSERT_NE(to, std::string::npos);
  EXPECT_EQ(doc.substr(from + begin.size(), to - from - begin.size()), ferry::serve::config_keys_markdown())
      << "docs/USAGE.md's key table is out of date; replace it with:\n"
      << ferry::serve::config_keys_markdown();
}

}  // namespace
