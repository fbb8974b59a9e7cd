// The model scheduler's parts on their own, without threads: the lifecycle's states and
// transitions, the request queue's bound and deadlines, and the batcher's choice over what a
// group may run. test_serve_scheduler.cpp drives them together, with workers.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "serve/scheduling/batcher.hpp"
#include "serve/scheduling/request_queue.hpp"
#include "serve/scheduling/scheduler_lifecycle.hpp"

namespace {

using namespace ferry::serve;
using namespace std::chrono_literals;

const steady_time t0 = std::chrono::steady_clock::now();

std::unique_ptr<scheduled_request> request(std::int64_t rows, steady_time arrived, std::optional<int> gpu = {}) {
  auto r = std::make_unique<scheduled_request>();
  r->work.plan.rows = rows;
  r->arrived = arrived;
  r->gpu = gpu;
  return r;
}

std::vector<std::int64_t> rows_of(const std::vector<std::unique_ptr<scheduled_request>>& batch) {
  std::vector<std::int64_t> rows;
  for (const auto& r : batch) rows.push_back(r->work.plan.rows);
  return rows;
}

TEST(ServeSchedulerLifecycle, StopDrainsThenUnloadsAndRefusesFromItsFirstStep) {
  scheduler_lifecycle life;
  EXPECT_EQ(life.state(), scheduler_state::ready);
  EXPECT_EQ(life.refusal("m"), std::nullopt);
  EXPECT_TRUE(life.threads_run());
  EXPECT_FALSE(life.stop_began());

  EXPECT_TRUE(life.begin_drain());
  EXPECT_EQ(life.state(), scheduler_state::draining);
  EXPECT_EQ(life.refusal("m"), "model 'm' is being unloaded");
  EXPECT_TRUE(life.threads_run()) << "admitted requests still run while draining";
  EXPECT_TRUE(life.stop_began());
  EXPECT_TRUE(life.begin_drain()) << "a second stop() waits for the same drain";

  EXPECT_TRUE(life.finish_drain());
  EXPECT_EQ(life.state(), scheduler_state::unloaded);
  EXPECT_FALSE(life.threads_run());
  EXPECT_EQ(life.refusal("m"), "model 'm' is being unloaded");
  EXPECT_FALSE(life.finish_drain()) << "only one stop() joins the threads";
  EXPECT_FALSE(life.begin_drain()) << "stop() again: nothing to do";

  life.shut_down();  // the destructor after stop()
  EXPECT_EQ(life.state(), scheduler_state::unloaded);
}

TEST(ServeSchedulerLifecycle, DestroyedWithoutStopShutsDown) {
  scheduler_lifecycle life;
  life.shut_down();
  EXPECT_EQ(life.state(), scheduler_state::shutting_down);
  EXPECT_FALSE(life.threads_run());
  EXPECT_FALSE(life.stop_began());
  EXPECT_EQ(life.refusal("m"), "model 'm' is shutting down");
  EXPECT_FALSE(life.begin_drain());
}

TEST(ServeRequestQueue, IsFullAtItsCapacityAndUnboundedAtZero) {
  request_queue bounded(2);
  EXPECT_FALSE(bounded.full());
  EXPECT_FALSE(bounded.push(request(1, t0), std::nullopt));
  EXPECT_FALSE(bounded.push(request(1, t0), std::nullopt));
  EXPECT_TRUE(bounded.full());
  EXPECT_EQ(bounded.size(), 2U);

  request_queue unbounded(0);
  for (int i = 0; i < 100; ++i) (void)unbounded.push(request(1, t0), std::nullopt);
  EXPECT_FALSE(unbounded.full());
}

TEST(ServeRequestQueue, WakesTheDeadlineThreadOnlyForASoonerDeadline) {
  request_queue q(0);
  EXPECT_TRUE(q.push(request(1, t0), t0 + 10ms)) << "the thread sleeps until woken while nothing has a deadline";
  q.deadline_thread_sleeps_until(*q.first_deadline());
  EXPECT_FALSE(q.push(request(1, t0), t0 + 20ms)) << "later than the thread's next look";
  EXPECT_TRUE(q.push(request(1, t0), t0 + 5ms));
  EXPECT_EQ(q.first_deadline(), t0 + 5ms);
}

TEST(ServeRequestQueue, WithdrawsExpiredRequestsSoonestFirstAndKeepsTheRestInOrder) {
  request_queue q(0);
  (void)q.push(request(1, t0), t0 + 30ms);
  (void)q.push(request(2, t0), std::nullopt);
  (void)q.push(request(3, t0), t0 + 10ms);
  (void)q.push(request(4, t0), t0 + 50ms);
  const auto late = q.withdraw_expired(t0 + 30ms);
  EXPECT_EQ(rows_of(late), (std::vector<std::int64_t>{3, 1}));
  ASSERT_EQ(q.size(), 2U);
  EXPECT_EQ(q.waiting()[0]->work.plan.rows, 2);
  EXPECT_EQ(q.waiting()[1]->work.plan.rows, 4);
  EXPECT_EQ(q.first_deadline(), t0 + 50ms);
}

TEST(ServeRequestQueue, ARequestTakenForABatchNoLongerTimesOut) {
  request_queue q(0);
  (void)q.push(request(1, t0), t0 + 10ms);
  (void)q.push(request(2, t0), t0 + 10ms);
  (void)q.push(request(3, t0), t0 + 10ms);
  const std::vector<std::size_t> positions{0, 2};
  const auto taken = q.take(positions);
  EXPECT_EQ(rows_of(taken), (std::vector<std::int64_t>{1, 3}));
  for (const auto& r : taken) EXPECT_FALSE(r->deadline.has_value());
  EXPECT_EQ(rows_of(q.withdraw_expired(t0 + 1s)), (std::vector<std::int64_t>{2}));
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.first_deadline(), std::nullopt);
}

TEST(ServeRequestQueue, ATimeoutPastTheClocksEndIsNoDeadline) {
  EXPECT_EQ(deadline_after(t0, std::nullopt), std::nullopt);
  EXPECT_EQ(deadline_after(t0, 5ms), t0 + 5ms);
  EXPECT_EQ(deadline_after(t0, std::chrono::microseconds::max()), std::nullopt);
}

TEST(ServeBatcher, TakesTheLongestFittingPrefixOfWhatTheGroupMayRun) {
  request_queue q(0);
  (void)q.push(request(2, t0), std::nullopt);
  (void)q.push(request(8, t0, 1), std::nullopt);  // another GPU's: not this group's
  (void)q.push(request(3, t0), std::nullopt);
  (void)q.push(request(4, t0), std::nullopt);
  const batcher b({.max_batch = 6, .delay = 0us});
  const auto on_host = [](const scheduled_request& r) { return !r.gpu; };
  auto formed = b.form(q, on_host);
  EXPECT_EQ(rows_of(formed.batch), (std::vector<std::int64_t>{2, 3})) << "4 more rows would not fit";
  ASSERT_EQ(q.size(), 2U);
  EXPECT_EQ(q.waiting()[0]->work.plan.rows, 8);
  EXPECT_EQ(rows_of(b.form(q, on_host).batch), (std::vector<std::int64_t>{4}));
  formed = b.form(q, on_host);
  EXPECT_TRUE(formed.batch.empty());
  EXPECT_EQ(formed.wait_until, std::nullopt) << "nothing to wait for but a new request";
}

TEST(ServeBatcher, WaitsForABatchToFillUntilItsFirstRequestsDelayRunsOut) {
  request_queue q(0);
  const auto arrived = std::chrono::steady_clock::now();
  (void)q.push(request(1, arrived), std::nullopt);
  const batcher b({.max_batch = 4, .delay = 1h});
  const auto formed = b.form(q, [](const scheduled_request&) { return true; });
  EXPECT_TRUE(formed.batch.empty());
  EXPECT_EQ(formed.wait_until, arrived + 1h);
  EXPECT_EQ(q.size(), 1U);
}

}  // namespace
