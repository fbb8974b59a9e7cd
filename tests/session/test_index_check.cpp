// The host side of ferry/session/index_check.hpp: the first value of an index input outside its bound,
// with its position in the request's shape, in one clear sentence.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ferry/session/index_check.hpp"

namespace {

using ferry::dtype;
using ferry::tensor_spec;

tensor_spec ids(dtype type, std::optional<std::int64_t> bound) {
  return {.name = "input_ids", .type = type, .shape = {-1, 4}, .role = ferry::tensor_role::input, .index_bound = bound};
}

TEST(IndexCheck, FindsTheFirstValueOutOfRangeWithItsPosition) {
  std::vector<std::int64_t> values = {0, 1, 2, 3, 4, 5, 99999, 7, -2, 9, 10, 11};
  const std::int64_t shape[] = {3, 4};
  const auto found = ferry::find_index_violation(std::as_bytes(std::span(values)), ids(dtype::i64, 30), shape);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->value, 99999);
  EXPECT_EQ(found->position, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(found->count, 2U);
  EXPECT_EQ(ferry::describe(*found),
            "input 'input_ids': value 99999 at [1, 2] is outside [0, 30) (2 values out of range)");
}

TEST(IndexCheck, NegativeValuesAndInt32) {
  std::vector<std::int32_t> values = {3, -1, 2, 1};
  const std::int64_t shape[] = {1, 4};
  const auto found = ferry::find_index_violation(std::as_bytes(std::span(values)), ids(dtype::i32, 4), shape);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->value, -1);
  EXPECT_EQ(found->position, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(ferry::describe(*found), "input 'input_ids': value -1 at [0, 1] is outside [0, 4)");
}

TEST(IndexCheck, ValuesInsideAndUnboundedInputsPass) {
  std::vector<std::int64_t> values = {0, 29, 3, 4};
  const std::int64_t shape[] = {1, 4};
  EXPECT_FALSE(ferry::find_index_violation(std::as_bytes(std::span(values)), ids(dtype::i64, 30), shape));
  values[1] = 1'000'000;
  EXPECT_FALSE(ferry::find_index_violation(std::as_bytes(std::span(values)), ids(dtype::i64, std::nullopt), shape));
}

TEST(IndexCheck, TheErrorIsTheCallersMistake) {
  const ferry::index_out_of_range e({.tensor = "t", .value = 5, .position = {0}, .bound = 5, .count = 1});
  const ferry::invalid_argument& as_invalid = e;
  EXPECT_STREQ(as_invalid.what(), "input 't': value 5 at [0] is outside [0, 5)");
  EXPECT_EQ(e.violation().bound, 5);
}

}  // namespace
