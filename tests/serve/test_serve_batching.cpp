// The dynamic-batching decision: FIFO prefixes up to max_batch, dispatched when full, when the
// next request does not fit, or when the first request has waited the delay.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "serve/scheduling/batching_policy.hpp"

namespace {

using namespace std::chrono_literals;
using ferry::serve::batching_rules;
using ferry::serve::decide_batch;
using ferry::serve::queued_request;

const auto t0 = std::chrono::steady_clock::time_point{} + 1h;

TEST(ServeBatching, EmptyQueueWaitsForArrivals) {
  const auto d = decide_batch({}, batching_rules{8, 100us}, t0);
  EXPECT_EQ(d.take, 0U);
  EXPECT_FALSE(d.wait_until.has_value());
}

TEST(ServeBatching, NoBatchingTakesOneAtATime) {
  const std::vector<queued_request> q{{1, t0}, {1, t0}};
  EXPECT_EQ(decide_batch(q, batching_rules{0, 1000us}, t0).take, 1U);
}

TEST(ServeBatching, WaitsForTheDelayWhileTheBatchHasRoom) {
  const std::vector<queued_request> q{{2, t0}, {3, t0 + 10us}};
  const auto d = decide_batch(q, batching_rules{8, 100us}, t0 + 20us);
  EXPECT_EQ(d.take, 0U);
  ASSERT_TRUE(d.wait_until.has_value());
  EXPECT_EQ(*d.wait_until, t0 + 100us);
  // Once the first request has waited the delay, whatever is queued goes.
  EXPECT_EQ(decide_batch(q, batching_rules{8, 100us}, t0 + 100us).take, 2U);
}

TEST(ServeBatching, AZeroDelayTakesWhatIsQueuedNow) {
  const std::vector<queued_request> q{{2, t0}, {3, t0}};
  EXPECT_EQ(decide_batch(q, batching_rules{8, 0us}, t0).take, 2U);
}

TEST(ServeBatching, AFullBatchGoesAtOnce) {
  const std::vector<queued_request> q{{4, t0}, {4, t0}, {1, t0}};
  EXPECT_EQ(decide_batch(q, batching_rules{8, 1s}, t0).take, 2U);
}

TEST(ServeBatching, StopsBeforeARequestThatDoesNotFitAndKeepsOrder) {
  // 3 + 4 = 7 fits, + 2 would not: a later 1-row request does not overtake it.
  const std::vector<queued_request> q{{3, t0}, {4, t0}, {2, t0}, {1, t0}};
  EXPECT_EQ(decide_batch(q, batching_rules{8, 1s}, t0).take, 2U);
}

TEST(ServeBatching, ARequestOfMaxBatchRowsGoesAlone) {
  const std::vector<queued_request> q{{8, t0}, {1, t0}};
  EXPECT_EQ(decide_batch(q, batching_rules{8, 1s}, t0).take, 1U);
}

}  // namespace
