// Client JSON: bounded nesting, every library failure a bad request, short quotes in messages.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "serve/codec/client_json.hpp"
#include "serve/vocabulary/request_error.hpp"
#include "support/serve_errors.hpp"

namespace {

using namespace ferry::serve;
using json = nlohmann::json;
using ferry::serve::testing::error_of;

std::string nested_arrays(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(ServeClientJson, ParsesADocument) {
  const json doc =
      parse_client_json(R"({"a": [1, -2, 3.5, true, null, "x"], "b": {"c": 18446744073709551615}})", "body");
  EXPECT_EQ(doc["a"], json({1, -2, 3.5, true, nullptr, "x"}));
  EXPECT_EQ(doc["b"]["c"].get<std::uint64_t>(), 18446744073709551615ULL);
  EXPECT_EQ(parse_client_json("7", "body"), json(7));
}

TEST(ServeClientJson, RefusesNestingBeyondTheLimitWithoutRecursing) {
  EXPECT_NO_THROW((void)parse_client_json(nested_arrays(max_json_depth), "body"));
  EXPECT_NE(error_of([] {
              (void)parse_client_json(nested_arrays(max_json_depth + 1), "body");
            }).find("body: arrays and objects nested deeper than 64 levels"),
            std::string::npos);
  // Deep enough to overflow any stack were it parsed, dumped or compared recursively.
  EXPECT_NE(error_of([] { (void)parse_client_json(nested_arrays(1'000'000), "body"); }).find("deeper than 64"),
            std::string::npos);
  std::string objects;
  for (int i = 0; i < 100; ++i) objects += R"({"a":)";
  objects += "1" + std::string(100, '}');
  EXPECT_NE(error_of([&] { (void)parse_client_json(objects, "body"); }).find("deeper than 64"), std::string::npos);
}

TEST(ServeClientJson, RefusesMoreValuesThanAnyRequestHolds) {
  const auto array_of = [](std::size_t n) {  // n numbers in an array: n + 1 values
    std::string text = "[";
    for (std::size_t i = 0; i < n; ++i) text += i == 0 ? "1" : ",1";
    return text + "]";
  };
  EXPECT_NO_THROW((void)parse_client_json(array_of(max_json_values - 1), "body"));
  EXPECT_NE(error_of([&] {
              (void)parse_client_json(array_of(max_json_values), "body");
            }).find("body: more than 65536 values"),
            std::string::npos);
}

TEST(ServeClientJson, RefusesNumbersBeyondADoubleAsBadRequests) {
  EXPECT_NE(error_of([] { (void)parse_client_json(R"({"x": [1e999]})", "body"); }).find("body: a number out of range"),
            std::string::npos);
  EXPECT_NE(error_of([] { (void)parse_client_json("-1e400", "body"); }).find("out of range"), std::string::npos);
  // The library quotes the whole token; the message keeps only its start.
  const std::string huge = "1" + std::string(100'000, '0');
  EXPECT_LT(error_of([&] { (void)parse_client_json(huge, "body"); }).size(), 400U);
}

TEST(ServeClientJson, RefusesMalformedTextRepeatedKeysAndNulBytes) {
  EXPECT_NE(error_of([] { (void)parse_client_json(R"({"a": )", "body"); }).find("body: malformed JSON"),
            std::string::npos);
  EXPECT_NE(error_of([] { (void)parse_client_json(R"({"a": 1, "a": 2})", "body"); }).find("\"a\" appears twice"),
            std::string::npos);
  EXPECT_NE(error_of([] { (void)parse_client_json(std::string("{}\0{}", 5), "body"); }).find("NUL byte at offset 2"),
            std::string::npos);
  EXPECT_NE(error_of([] { (void)parse_client_json("", "body"); }).find("malformed JSON"), std::string::npos);
  EXPECT_NE(error_of([] { (void)parse_client_json("[1] [2]", "body"); }).find("malformed JSON"), std::string::npos);
}

TEST(ServeClientJson, QuotesClientValuesBriefly) {
  EXPECT_EQ(quote_json(json(3)), "3");
  EXPECT_EQ(quote_json(json(nullptr)), "null");
  EXPECT_EQ(quote_json(json("ab")), "\"ab\"");
  EXPECT_EQ(quote_json(json({1, 2, 3})), "an array of 3 elements");
  EXPECT_EQ(quote_json(json::object()), "an object of 0 members");
  const std::string long_text(10'000, 'x');
  EXPECT_EQ(quote_json(json(long_text)), "\"" + std::string(max_quoted_chars, 'x') + "\"...");
  EXPECT_EQ(quote_text(long_text), std::string(max_quoted_chars, 'x') + "...");
  // A cut inside a UTF-8 sequence is replaced rather than thrown on.
  std::string accents;
  for (int i = 0; i < 40; ++i) accents += "\xC3\xA9";
  EXPECT_NO_THROW((void)quote_json(json(accents.substr(1))));
}

}  // namespace
