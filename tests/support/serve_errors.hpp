// Shared by the serve unit tests: runs a call that must fail with a request_error of the given
// protocol status and returns its message, so each test can check what the message names.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve::testing {

inline std::string error_of(const std::function<void()>& call, error_status status = error_status::bad_request) {
  try {
    call();
  } catch (const request_error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    return e.what();
  }
  return "no exception";
}

}  // namespace ferry::serve::testing
