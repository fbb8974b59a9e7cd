// A strategy as a gtest parameter name: gtest allows only letters, digits and underscores, so
// "managed-prefetch" becomes "managed_prefetch".
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "ferry/memory/strategy.hpp"

inline std::string strategy_test_name(const ::testing::TestParamInfo<ferry::strategy_kind>& info) {
  std::string name(ferry::to_string(info.param));
  for (auto& c : name)
    if (c == '-') c = '_';
  return name;
}
