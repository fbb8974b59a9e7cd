// The per-model scheduler with a scripted executor: batches form under load, a failing request
// fails alone (its batch-mates are retried and answered), a slow batch holds one worker, not
// the queue, a full queue refuses more, a request still queued at its timeout is withdrawn, and
// stopping (a model's unload) answers every request it had before it releases the executor.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "serve/execution/batch_io.hpp"
#include "serve/scheduling/model_scheduler.hpp"
#include "serve/vocabulary/request_error.hpp"
#include "support/serve_errors.hpp"
#include "support/test_gate.hpp"

namespace {

using namespace ferry::serve;
using namespace std::chrono_literals;
using ferry::dtype;
using ferry::dynamic_dim;
using ferry::tensor_role;
using ferry::tensor_spec;

constexpr float fail_marker = -1.0F;
constexpr float slow_marker = -2.0F;
constexpr float gated_marker = -3.0F;

using ferry::testing::gate;

// y = x + 1000 per row. A row holding fail_marker makes the whole run throw; slow_marker sleeps;
// gated_marker waits for the gate.
class scripted_executor final : public executor {
 public:
  explicit scripted_executor(int workers) : workers_(workers) {}
  [[nodiscard]] const std::vector<tensor_spec>& io() const override { return io_; }
  [[nodiscard]] int workers() const override { return workers_; }
  [[nodiscard]] std::string platform() const override { return "scripted"; }
  batch_timing execute(std::span<batch_item> batch, int /*worker*/) override {
    ++runs;
    const std::int64_t rows = total_rows(batch);
    largest_batch = std::max<std::int64_t>(largest_batch, rows);
    std::vector<float> x(static_cast<std::size_t>(rows));
    gather_input(batch, 0, std::as_writable_bytes(std::span(x)), gathered_for::host);
    for (float v : x) {
      if (v == fail_marker) throw std::runtime_error("scripted failure");
      if (v == slow_marker) std::this_thread::sleep_for(300ms);
      if (v == gated_marker) held.pass();
    }
    for (float& v : x) v += 1000;
    const std::vector<tensor_spec> out{{"y", dtype::f32, {rows}, tensor_role::output, std::nullopt}};
    const std::vector<std::span<const std::byte>> sources{std::as_bytes(std::span(x))};
    scatter_outputs(batch, signature(), out, sources);
    return {};
  }
  [[nodiscard]] model_signature signature() const { return make_signature(io_, 8, "m"); }

  std::atomic<int> runs{0};
  std::atomic<std::int64_t> largest_batch{0};
  gate held;

 private:
  int workers_;
  std::vector<tensor_spec> io_{{"x", dtype::f32, {dynamic_dim}, tensor_role::input, std::nullopt},
                               {"y", dtype::f32, {dynamic_dim}, tensor_role::output, std::nullopt}};
};

struct client_request {
  std::vector<float> x;
  std::optional<pending_response> answer;
};

pending_response send(model_scheduler& s, const model_signature& sig, std::vector<float>& x,
                      std::optional<std::chrono::microseconds> timeout = std::nullopt) {
  submission work;
  work.timeout = timeout;
  work.request.model = "m";
  work.request.inputs.push_back(
      {"x", dtype::f32, {static_cast<std::int64_t>(x.size())}, std::as_bytes(std::span(x)), std::nullopt});
  work.plan = plan_request(sig, work.request);
  return s.submit(std::move(work));
}

std::vector<float> values(const infer_response& r) {
  std::vector<float> v(r.outputs.at(0).data.size() / sizeof(float));
  std::memcpy(v.data(), r.outputs[0].data.data(), v.size() * sizeof(float));
  return v;
}

TEST(ServeScheduler, BatchesUnderLoadAndAnswersEachRequestWithItsOwnRows) {
  auto exec = std::make_shared<scripted_executor>(1);
  const auto sig = exec->signature();
  model_statistics stats;
  model_scheduler scheduler("m", "1", exec, sig, {8, 20ms}, stats);
  std::vector<client_request> requests(24);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    requests[i].x.assign(1 + i % 3, static_cast<float>(i));
    requests[i].answer = send(scheduler, sig, requests[i].x);
  }
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const infer_response r = requests[i].answer->get();
    EXPECT_EQ(values(r), std::vector<float>(requests[i].x.size(), static_cast<float>(i) + 1000)) << i;
    EXPECT_EQ(r.outputs[0].shape, (std::vector<std::int64_t>{static_cast<std::int64_t>(requests[i].x.size())}));
  }
  EXPECT_LT(exec->runs.load(), 24);
  EXPECT_LE(exec->largest_batch.load(), 8);
  const auto s = stats.snapshot();
  EXPECT_EQ(s.success.count, 24U);
  EXPECT_EQ(s.execution_count, static_cast<std::uint64_t>(exec->runs.load()));
}

TEST(ServeScheduler, AFailingRequestFailsAloneItsBatchMatesAreAnswered) {
  auto exec = std::make_shared<scripted_executor>(1);
  const auto sig = exec->signature();
  model_statistics stats;
  model_scheduler scheduler("m", "1", exec, sig, {8, 30ms}, stats);
  std::vector<float> good1{1}, bad{fail_marker}, good2{2, 3};
  auto a = send(scheduler, sig, good1);
  auto b = send(scheduler, sig, bad);
  auto c = send(scheduler, sig, good2);
  EXPECT_EQ(values(a.get()), (std::vector<float>{1001}));
  try {
    (void)b.get();
    ADD_FAILURE() << "the failing request succeeded";
  } catch (const request_error& e) {
    EXPECT_EQ(e.status(), error_status::internal);
    EXPECT_NE(std::string(e.what()).find("scripted failure"), std::string::npos);
  }
  EXPECT_EQ(values(c.get()), (std::vector<float>{1002, 1003}));
  EXPECT_EQ(stats.snapshot().fail.count, 1U);
}

TEST(ServeScheduler, ASlowBatchDoesNotHoldTheQueue) {
  auto exec = std::make_shared<scripted_executor>(2);
  const auto sig = exec->signature();
  model_statistics stats;
  model_scheduler scheduler("m", "1", exec, sig, {8, 0us}, stats);
  std::vector<float> slow{slow_marker};
  auto s = send(scheduler, sig, slow);
  std::this_thread::sleep_for(20ms);  // the slow one is running on a worker
  std::vector<float> quick{5};
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(values(send(scheduler, sig, quick).get()), (std::vector<float>{1005}));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 200ms);
  EXPECT_EQ(values(s.get()), (std::vector<float>{slow_marker + 1000}));
}

TEST(ServeScheduler, RefusesRequestsPastMaxQueueSizeAndServesThoseItHolds) {
  auto exec = std::make_shared<scripted_executor>(1);
  const auto sig = exec->signature();
  model_statistics stats;
  model_scheduler scheduler("m", "1", exec, sig, {0, 0us}, stats, 2);
  EXPECT_EQ(scheduler.max_queue_size(), 2U);
  std::vector<float> running{gated_marker}, first{1}, second{2}, refused{3}, later{4};
  auto a = send(scheduler, sig, running);
  exec->held.wait_for_arrivals(1);  // the only worker is busy
  auto b = send(scheduler, sig, first);
  auto c = send(scheduler, sig, second);
  EXPECT_EQ(ferry::serve::testing::error_of([&] { (void)send(scheduler, sig, refused); }, error_status::unavailable),
            "model 'm' is busy: 2 requests wait for a worker, its max_queue_size; try again later");
  EXPECT_EQ(scheduler.pending(), 2U);
  EXPECT_EQ(stats.snapshot().fail.count, 1U);

  exec->held.open();
  EXPECT_EQ(values(a.get()), (std::vector<float>{gated_marker + 1000}));
  EXPECT_EQ(values(b.get()), (std::vector<float>{1001}));
  EXPECT_EQ(values(c.get()), (std::vector<float>{1002}));
  EXPECT_EQ(values(send(scheduler, sig, later).get()), (std::vector<float>{1004}));
  EXPECT_EQ(exec->runs.load(), 4);  // the refused request never ran
}

TEST(ServeScheduler, ARequestStillQueuedAtItsTimeoutIsWithdrawnAndNeverRun) {
  auto exec = std::make_shared<scripted_executor>(1);
  const auto sig = exec->signature();
  model_statistics stats;
  model_scheduler scheduler("m", "1", exec, sig, {0, 0us}, stats, 1);
  std::vector<float> running{gated_marker}, late{7}, next{8};
  auto a = send(scheduler, sig, running);
  exec->held.wait_for_arrivals(1);
  auto b = send(scheduler, sig, late, 30ms);
  const auto start = std::chrono::steady_clock::now();
  const std::string message = ferry::serve::testing::error_of([&] { (void)b.get(); }, error_status::timed_out);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 25ms);
  EXPECT_EQ(message.rfind("model 'm': the request timed out: no worker started it within its timeout of 30 ms", 0), 0U)
      << message;
  // Its place in the queue is free again (max_queue_size 1), and only the right requests run.
  EXPECT_EQ(scheduler.pending(), 0U);
  auto c = send(scheduler, sig, next);
  exec->held.open();
  EXPECT_EQ(values(a.get()), (std::vector<float>{gated_marker + 1000}));
  EXPECT_EQ(values(c.get()), (std::vector<float>{1008}));
  EXPECT_EQ(exec->runs.load(), 2);
  EXPECT_EQ(stats.snapshot().fail.count, 1U);
  EXPECT_EQ(stats.snapshot().success.count, 2U);
}

TEST(ServeScheduler, ARequestStartedBeforeItsTimeoutGetsItsOwnResult) {
  auto exec = std::make_shared<scripted_executor>(1);
  const auto sig = exec->signature();
  model_statistics stats;
  model_scheduler scheduler("m", "1", exec, sig, {0, 0us}, stats);
  std::vector<float> running{gated_marker}, endless{9};
  // A timeout long enough for the worker to start it even on a loaded machine (10 ms was not:
  // under two busy CPU loops the request once timed out in the queue, and the test waited for it
  // to run for ever), then held running past it.
  constexpr auto timeout = 500ms;
  const auto sent = std::chrono::steady_clock::now();
  auto a = send(scheduler, sig, running, timeout);
  exec->held.wait_for_arrivals(1);
  std::this_thread::sleep_until(sent + timeout + 50ms);  // past its deadline, while it runs
  exec->held.open();
  EXPECT_EQ(values(a.get()), (std::vector<float>{gated_marker + 1000}));
  // A timeout too long for the clock to hold is no timeout at all.
  EXPECT_EQ(values(send(scheduler, sig, endless, std::chrono::microseconds::max()).get()), (std::vector<float>{1009}));
}

// Front ends never wait for a model: the answer comes through the callback, on the scheduler's
// thread; a request that times out while nobody waits for it is answered by the deadline thread.
TEST(ServeScheduler, AnswersThroughTheCallbackAndTimesOutWithNobodyWaiting) {
  auto exec = std::make_shared<scripted_executor>(1);
  const auto sig = exec->signature();
  model_statistics stats;
  model_scheduler scheduler("m", "1", exec, sig, {0, 0us}, stats, 4);
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::pair<std::string, std::thread::id>> outcomes;
  const auto submit = [&](std::vector<float>& x, std::optional<std::chrono::microseconds> timeout) {
    submission work;
    work.timeout = timeout;
    work.request.model = "m";
    work.request.inputs.push_back(
        {"x", dtype::f32, {static_cast<std::int64_t>(x.size())}, std::as_bytes(std::span(x)), std::nullopt});
    work.plan = plan_request(sig, work.request);
    scheduler.submit(std::move(work), [&](infer_result result) {
      std::string what;
      if (result.failure) {
        what =
            ferry::serve::testing::error_of([&] { std::rethrow_exception(result.failure); }, error_status::timed_out);
      } else {
        what = std::to_string(static_cast<int>(values(result.response).at(0)));
      }
      const std::lock_guard lock(mutex);
      outcomes.emplace_back(what, std::this_thread::get_id());
      changed.notify_all();
    });
  };
  std::vector<float> running{gated_marker}, late{7};
  submit(running, std::nullopt);
  exec->held.wait_for_arrivals(1);
  submit(late, 20ms);
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, 5s, [&] { return outcomes.size() == 1; }));
    EXPECT_EQ(outcomes[0].first.rfind("model 'm': the request timed out", 0), 0U) << outcomes[0].first;
    EXPECT_NE(outcomes[0].second, std::this_thread::get_id());
  }
  EXPECT_EQ(scheduler.pending(), 0U);
  exec->held.open();
  std::unique_lock lock(mutex);
  ASSERT_TRUE(changed.wait_for(lock, 5s, [&] { return outcomes.size() == 2; }));
  EXPECT_EQ(outcomes[1].first, std::to_string(static_cast<int>(gated_marker + 1000)));
  EXPECT_NE(outcomes[1].second, std::this_thread::get_id());
  EXPECT_EQ(exec->runs.load(), 1);  // the late one never ran
}

TEST(ServeScheduler, StopAnswersEveryRequestItHadThenReleasesTheExecutor) {
  auto exec = std::make_shared<scripted_executor>(2);
  const auto sig = exec->signature();
  const std::weak_ptr<scripted_executor> watch = exec;
  model_statistics stats;
  model_scheduler scheduler("m", "1", std::move(exec), sig, {0, 0us}, stats);
  // Two running (held at the gate), six queued behind them.
  std::vector<client_request> requests(8);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    requests[i].x.assign(1, i < 2 ? gated_marker : static_cast<float>(i));
    requests[i].answer = send(scheduler, sig, requests[i].x);
  }
  watch.lock()->held.wait_for_arrivals(2);
  std::thread stopping([&] { scheduler.stop(); });
  // New work is refused once the stop began; what came before it is answered like the rest.
  std::vector<float> late{99};
  std::vector<pending_response> admitted;
  std::string refused;
  for (int i = 0; i < 5000 && refused.empty(); ++i) {
    try {
      admitted.push_back(send(scheduler, sig, late));
    } catch (const request_error& e) {
      EXPECT_EQ(e.status(), error_status::unavailable);
      refused = e.what();
    }
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(refused, "model 'm' is being unloaded");
  EXPECT_EQ(scheduler.state(), scheduler_state::draining) << "two requests are held at the gate";
  EXPECT_FALSE(watch.expired()) << "the executor goes only after the requests it runs";
  watch.lock()->held.open();
  stopping.join();
  for (std::size_t i = 0; i < requests.size(); ++i)
    EXPECT_EQ(values(requests[i].answer->get()), std::vector<float>{requests[i].x[0] + 1000}) << i;
  for (auto& answer : admitted) EXPECT_EQ(values(answer.get()), std::vector<float>{1099});
  EXPECT_TRUE(watch.expired()) << "stop() releases the executor";
  EXPECT_EQ(scheduler.state(), scheduler_state::unloaded);
  EXPECT_EQ(scheduler.pending(), 0U);
  scheduler.stop();  // again: nothing to do
}

TEST(ServeStatistics, DurationHistogramsCountEachRequestInItsBucket) {
  model_statistics stats;
  stats.record_success(1, 50'000, 80'000);                        // 50 us queued, 80 us in all
  stats.record_success(1, 3'000'000, 20'000'000);                 // 3 ms, 20 ms
  stats.record_success(1, 0, 60'000'000'000);                     // a minute: past the last bound
  stats.record_execution(4, 2, {.compute_infer_ns = 1'000'000});  // exactly 1 ms, twice
  const auto s = stats.snapshot();
  const auto bucket_of = [](std::uint64_t us) {
    return static_cast<std::size_t>(std::find(duration_bucket_bounds_us.begin(), duration_bucket_bounds_us.end(), us) -
                                    duration_bucket_bounds_us.begin());
  };
  EXPECT_EQ(s.request_histogram.counts[bucket_of(100)], 1U);
  EXPECT_EQ(s.request_histogram.counts[bucket_of(25'000)], 1U);
  EXPECT_EQ(s.request_histogram.counts.back(), 1U);  // +Inf
  EXPECT_EQ(s.request_histogram.count(), 3U);
  EXPECT_EQ(s.request_histogram.sum_ns, 80'000U + 20'000'000U + 60'000'000'000U);
  EXPECT_EQ(s.queue_histogram.counts[bucket_of(100)], 2U);  // 0 and 50 us
  EXPECT_EQ(s.queue_histogram.counts[bucket_of(5'000)], 1U);
  EXPECT_EQ(s.compute_infer_histogram.counts[bucket_of(1'000)], 2U);  // a bound is its bucket's own
  EXPECT_EQ(s.compute_infer_histogram.count(), 2U);
}

TEST(ServeStatistics, EngineRunsAreCountedByBucketWithThePaddingTheyAdded) {
  model_statistics stats;
  stats.record_execution(3, 3, {.compute_infer_ns = 1'000, .run_rows = 4});  // 3 rows at bucket 4
  stats.record_execution(4, 1, {.compute_infer_ns = 1'000, .run_rows = 4});
  stats.record_execution(9, 2, {.compute_infer_ns = 1'000, .run_rows = 16});
  stats.record_execution(5, 5, {.compute_infer_ns = 1'000});  // the host: exactly its rows
  const auto s = stats.snapshot();
  EXPECT_EQ(s.bucket_executions, (std::map<std::int64_t, std::uint64_t>{{4, 2}, {5, 1}, {16, 1}}));
  EXPECT_EQ(s.padded_rows, 1U + 7U);
  // batch_stats stay by the rows the requests brought, as Triton's.
  EXPECT_EQ(s.batches.size(), 4U);
  EXPECT_EQ(s.batches.at(3).compute_infer.count, 1U);
}

}  // namespace
