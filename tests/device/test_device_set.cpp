// `--devices`: which GPUs a run spreads over, parsed without a GPU.
#include <gtest/gtest.h>

#include <string>

#include "ferry/core/error.hpp"
#include "ferry/device/device_set.hpp"

namespace {

using ferry::parse_device_set;

// The message of the invalid_argument `text` raises with `count` GPUs.
std::string error_of(const std::string& text, int count) {
  try {
    (void)parse_device_set(text, count);
  } catch (const ferry::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(DeviceSet, AllSingleAndLists) {
  EXPECT_EQ(parse_device_set("all", 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_device_set("all", 1), (std::vector<int>{0}));
  EXPECT_EQ(parse_device_set("1", 2), (std::vector<int>{1}));
  EXPECT_EQ(parse_device_set("0,1", 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_device_set("3,0,2", 4), (std::vector<int>{3, 0, 2}));  // order kept
}

TEST(DeviceSet, BadTokensAreNamed) {
  EXPECT_NE(error_of("0,x", 2).find("'x'"), std::string::npos) << error_of("0,x", 2);
  EXPECT_NE(error_of("-1", 2).find("'-1'"), std::string::npos) << error_of("-1", 2);
  EXPECT_NE(error_of("1.5", 2).find("'1.5'"), std::string::npos) << error_of("1.5", 2);
  EXPECT_NE(error_of("0 ,1", 2).find("'0 '"), std::string::npos) << error_of("0 ,1", 2);
  EXPECT_NE(error_of("ALL", 2).find("'ALL'"), std::string::npos);
  EXPECT_NE(error_of("", 2).find("empty"), std::string::npos);
  EXPECT_NE(error_of("0,,1", 2).find("empty item"), std::string::npos) << error_of("0,,1", 2);
  EXPECT_NE(error_of("0,", 2).find("empty item"), std::string::npos) << error_of("0,", 2);
  EXPECT_NE(error_of(",0", 2).find("empty item"), std::string::npos) << error_of(",0", 2);
}

TEST(DeviceSet, DuplicatesAreRefused) {
  const std::string e = error_of("0,1,0", 2);
  EXPECT_NE(e.find("GPU 0 is listed twice"), std::string::npos) << e;
}

TEST(DeviceSet, OrdinalsOutOfRangeSayHowManyGpusThereAre) {
  const std::string one = error_of("1", 1);
  EXPECT_NE(one.find("GPU 1 does not exist"), std::string::npos) << one;
  EXPECT_NE(one.find("has 1 GPU"), std::string::npos) << one;
  const std::string two = error_of("0,2", 2);
  EXPECT_NE(two.find("GPU 2 does not exist"), std::string::npos) << two;
  EXPECT_NE(two.find("0-1"), std::string::npos) << two;
}

TEST(DeviceSet, NoGpuIsNoDevice) {
  EXPECT_THROW((void)parse_device_set("all", 0), ferry::no_device);
  EXPECT_THROW((void)parse_device_set("0", 0), ferry::no_device);
}

TEST(DeviceSet, FormatReadsBack) {
  const std::vector<int> devices{1, 0};
  EXPECT_EQ(ferry::format_device_set(devices), "1,0");
  EXPECT_EQ(parse_device_set(ferry::format_device_set(devices), 2), devices);
}

}  // namespace
