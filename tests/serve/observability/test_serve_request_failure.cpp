// The one map from what a request's processing throws to what its client is told: every kind of
// failure classified once (request_failure.hpp), and each error status answered from one table by
// both protocols, with the same meaning in each.
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "ferry/core/error.hpp"
#include "ferry/session/index_check.hpp"
#include "serve/observability/request_failure.hpp"
#include "serve/vocabulary/request_error.hpp"

namespace {

using namespace ferry::serve;

template <typename Throw>
request_error classified(Throw throw_it) {
  try {
    throw_it();
  } catch (...) {
    return current_request_error(allocation_stage::execute, "model 'm': ");
  }
  return {error_status::internal, "nothing thrown"};
}

TEST(ServeRequestFailure, EachKindOfFailureIsClassifiedOnce) {
  const auto bad = classified([] { throw ferry::invalid_argument("no tensor 'x'"); });
  EXPECT_EQ(bad.status(), error_status::bad_request);
  EXPECT_STREQ(bad.what(), "model 'm': no tensor 'x'");
  ferry::index_violation v{.tensor = "ids", .value = 7, .position = {0}, .bound = 5, .count = 1};
  EXPECT_EQ(classified([&] { throw ferry::index_out_of_range(v); }).status(), error_status::bad_request);
  const auto json = classified([] { throw nlohmann::json::type_error::create(302, "type must be number", nullptr); });
  EXPECT_EQ(json.status(), error_status::bad_request);
  EXPECT_NE(std::string(json.what()).find("unexpected JSON in the request"), std::string::npos);
  const auto memory = classified([] { throw std::bad_alloc(); });
  EXPECT_EQ(memory.status(), error_status::out_of_memory);
  EXPECT_NE(std::string(memory.what()).find("(execute)"), std::string::npos);
  const auto engine = classified([] { throw std::runtime_error("kernel failed"); });
  EXPECT_EQ(engine.status(), error_status::internal);
  EXPECT_STREQ(engine.what(), "model 'm': kernel failed");
  // A request_error keeps its status and its message: it already says what it is.
  const auto own = classified([] { throw request_error(error_status::not_found, "no region 'r'"); });
  EXPECT_EQ(own.status(), error_status::not_found);
  EXPECT_STREQ(own.what(), "no region 'r'");
  EXPECT_EQ(classified([] { throw 42; }).status(), error_status::internal);
}

TEST(ServeRequestFailure, BothProtocolsSayTheSameOfEveryStatus) {
  // gRPC's codes by number and the HTTP status of the same meaning (grpc/status.h; RFC 9110).
  struct meaning {
    error_status status;
    int http;
    int grpc;
  };
  const meaning table[] = {
      {error_status::bad_request, 400, 3},        // INVALID_ARGUMENT
      {error_status::not_found, 404, 5},          // NOT_FOUND
      {error_status::unavailable, 503, 14},       // UNAVAILABLE
      {error_status::forbidden, 403, 7},          // PERMISSION_DENIED
      {error_status::payload_too_large, 413, 8},  // RESOURCE_EXHAUSTED
      {error_status::quota_exceeded, 429, 8},     // RESOURCE_EXHAUSTED
      {error_status::timed_out, 504, 4},          // DEADLINE_EXCEEDED
      {error_status::not_implemented, 501, 12},   // UNIMPLEMENTED
      {error_status::internal, 500, 13},          // INTERNAL
      {error_status::out_of_memory, 503, 8},      // RESOURCE_EXHAUSTED: retry later, smaller
  };
  for (const auto& m : table) {
    EXPECT_EQ(http_status(m.status), m.http) << static_cast<int>(m.status);
    EXPECT_EQ(grpc_status_code(m.status), m.grpc) << static_cast<int>(m.status);
  }
}

}  // namespace
