// The dynamic-batching decision: FIFO prefixes up to max_batch, dispatched when full, when the
// next request does not fit, when the first request has waited the delay, or, with a latency
// target, when waiting longer would answer the oldest request late or another worker is idle; and
// the buckets a batch runs at.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "serve/scheduling/batching_policy.hpp"

namespace {

using namespace std::chrono_literals;
using ferry::serve::batching_rules;
using ferry::serve::decide_batch;
using ferry::serve::queued_request;
using ferry::serve::worker_view;

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

// A model of buckets 1, 2, 4, 8 whose runs take 1, 2, 3 and 5 ms, with a 10 ms target.
batching_rules with_target(std::chrono::microseconds delay = 0us) {
  return batching_rules{.max_batch = 8,
                        .delay = delay,
                        .latency_target = 10ms,
                        .buckets = {1, 2, 4, 8},
                        .bucket_run_times = {1ms, 2ms, 3ms, 5ms}};
}
constexpr worker_view all_busy{.another_idle = false};

TEST(ServeBatching, ATargetWaitsWhileTheOldestRequestWouldStillBeAnsweredInTime) {
  // Three rows queued: one more joins bucket 4 (3 ms), so the oldest may wait until 10 - 3 ms,
  // while rows keep coming (each new one moves the gap's bound on by 3 ms).
  const std::vector<queued_request> q{{2, t0}, {1, t0 + 5ms}};
  const auto early = decide_batch(q, with_target(), t0 + 6ms, all_busy);
  EXPECT_EQ(early.take, 0U);
  ASSERT_TRUE(early.wait_until.has_value());
  EXPECT_EQ(*early.wait_until, t0 + 7ms);
  EXPECT_EQ(decide_batch(q, with_target(), t0 + 7ms, all_busy).take, 2U);
}

TEST(ServeBatching, ATargetStopsWaitingWhenRowsStopComing) {
  // The newest row came at t0 + 1 ms; none for a bucket-4 run (3 ms) since: go at t0 + 4 ms, well
  // before the target's t0 + 7 ms.
  const std::vector<queued_request> q{{2, t0}, {1, t0 + 1ms}};
  EXPECT_EQ(*decide_batch(q, with_target(), t0 + 2ms, all_busy).wait_until, t0 + 4ms);
  EXPECT_EQ(decide_batch(q, with_target(), t0 + 4ms, all_busy).take, 2U);
}

TEST(ServeBatching, ATargetWeighsTheBucketTheBatchWouldJoin) {
  // Four rows: one more moves the batch into bucket 8, whose 5 ms run leaves 5 ms to wait.
  const std::vector<queued_request> q{{4, t0}};
  EXPECT_EQ(*decide_batch(q, with_target(), t0, all_busy).wait_until, t0 + 5ms);
  // One row: bucket 2 (2 ms) is next: 8 ms to wait by the target, but 2 ms by the gap.
  const std::vector<queued_request> one{{1, t0}};
  EXPECT_EQ(*decide_batch(one, with_target(), t0, all_busy).wait_until, t0 + 2ms);
}

TEST(ServeBatching, ATargetRunsAtOnceWhileAnotherWorkerIsIdle) {
  // Nothing is gained by waiting while a second batch could run beside this one.
  const std::vector<queued_request> q{{1, t0}};
  EXPECT_EQ(decide_batch(q, with_target(), t0, worker_view{.another_idle = true}).take, 1U);
}

TEST(ServeBatching, TheDelayBoundsATargetAndTheSoonerBoundHolds) {
  const std::vector<queued_request> q{{1, t0}};
  EXPECT_EQ(*decide_batch(q, with_target(500us), t0, all_busy).wait_until, t0 + 500us);
  EXPECT_EQ(decide_batch(q, with_target(500us), t0 + 500us, all_busy).take, 1U);
  // An idle worker ends the target's wait, not the delay's: the delay is Triton's fixed bound.
  EXPECT_EQ(*decide_batch(q, with_target(500us), t0, worker_view{.another_idle = true}).wait_until, t0 + 500us);
}

TEST(ServeBatching, ATargetShorterThanTheRunGoesAtOnceAndAFullBatchNeverWaits) {
  auto rules = with_target();
  rules.latency_target = 2ms;  // below bucket 2's 2 ms run once any time has passed
  const std::vector<queued_request> q{{1, t0}};
  EXPECT_EQ(decide_batch(q, rules, t0 + 1us, all_busy).take, 1U);
  const std::vector<queued_request> full{{4, t0}, {4, t0}};
  EXPECT_EQ(decide_batch(full, with_target(), t0, all_busy).take, 2U);
}

TEST(ServeBatching, WithoutMeasuredRunTimesATargetIsTheWholeWait) {
  auto rules = with_target();
  rules.bucket_run_times.clear();
  const std::vector<queued_request> q{{1, t0}};
  EXPECT_EQ(*decide_batch(q, rules, t0, all_busy).wait_until, t0 + 10ms);
}

TEST(ServeBuckets, DefaultsArePowersOfTwoUpToMaxBatchAndMaxBatchItself) {
  EXPECT_EQ(ferry::serve::default_batch_buckets(16), (std::vector<std::int64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(ferry::serve::default_batch_buckets(10), (std::vector<std::int64_t>{1, 2, 4, 8, 10}));
  EXPECT_EQ(ferry::serve::default_batch_buckets(1), (std::vector<std::int64_t>{1}));
  EXPECT_TRUE(ferry::serve::default_batch_buckets(0).empty());
}

TEST(ServeBuckets, ABatchRunsAtTheSmallestBucketThatHoldsItsRows) {
  const std::vector<std::int64_t> buckets{1, 4, 16, 64};
  EXPECT_EQ(ferry::serve::bucket_rows(buckets, 1), 1);
  EXPECT_EQ(ferry::serve::bucket_rows(buckets, 3), 4);
  EXPECT_EQ(ferry::serve::bucket_rows(buckets, 4), 4);
  EXPECT_EQ(ferry::serve::bucket_rows(buckets, 5), 16);
  EXPECT_EQ(ferry::serve::bucket_rows(buckets, 64), 64);
  EXPECT_EQ(ferry::serve::bucket_index(buckets, 17), 3U);
  EXPECT_EQ(ferry::serve::bucket_rows({}, 7), 7);  // no buckets: the rows themselves
}

}  // namespace
