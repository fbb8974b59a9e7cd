// Sessions run at smaller batches than their buffers hold (session_options::batch_sizes): a
// request at 3 rows run at a size of 4 answers exactly as at the full 16, under every strategy,
// plain and as graphs; an engine whose contexts reshape keeps one graph per size on one context
// (tests/support/own_graph_engine.hpp), one that cannot (the example backend, API without
// reshape) gets a context per size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/engines/model_engine.hpp"
#include "ferry/session/session.hpp"
#include "support/backend_test_paths.hpp"
#include "support/own_graph_engine.hpp"
#include "support/strategy_test_name.hpp"

namespace {

using ferry::strategy_kind;

constexpr std::size_t width = 1024;  // the example model's row

// Runs `rows` rows of values from `seed` at batch size `size` (the rest of the size's rows hold a
// sentinel no answer may show), returns the first `rows` rows of the output.
std::vector<float> run_rows(ferry::session& s, std::int64_t size, std::int64_t rows, float seed) {
  auto filling = s.acquire();
  filling.run_at_rows(size);
  auto in = filling.input(0);
  EXPECT_EQ(in.size(), static_cast<std::size_t>(size) * width * sizeof(float));
  EXPECT_EQ(filling.input_spec(0).shape.front(), size);
  auto* x = reinterpret_cast<float*>(in.data());
  const std::size_t used = static_cast<std::size_t>(rows) * width;
  for (std::size_t i = 0; i < used; ++i) x[i] = seed + static_cast<float>(i % 977);
  std::fill(x + used, x + in.size() / sizeof(float), 1.0e6F);  // padding rows
  filling.upload_resident_inputs();
  auto done = std::move(filling).submit().wait();
  done.download_resident_outputs();
  const auto out = done.output(0);
  EXPECT_EQ(out.size(), static_cast<std::size_t>(size) * width * sizeof(float));
  std::vector<float> answer(used);
  std::memcpy(answer.data(), out.data(), used * sizeof(float));
  return answer;
}

class BatchSizesOnEveryStrategy : public ::testing::TestWithParam<strategy_kind> {};

TEST_P(BatchSizesOnEveryStrategy, ThreeRowsAtSizeFourAnswerAsAtTheFullBatchPlainAndAsGraphs) {
  const auto caps = ferry::query_device(0);
  if (auto reason = ferry::unavailable_reason(GetParam(), caps)) GTEST_SKIP() << *reason;
  auto eng = ferry::load_model_engine(
      "affine:" + ferry::test::example_model().string(),
      {.device = 0, .max_concurrency = 2, .backend_directories = {ferry::test::example_backend_dir()}});
  const ferry::shape_binding full[] = {{"x", {16, width}}};
  for (const auto graph : {ferry::graph_mode::off, ferry::graph_mode::on}) {
    ferry::session s(*eng, eng->resolve(full),
                     {.strategy = GetParam(), .inflight = 2, .graph = graph, .batch_sizes = {1, 4}}, caps);
    EXPECT_EQ(s.batch_sizes(), (std::vector<std::int64_t>{1, 4, 16}));
    s.warmup();
    const char* how = graph == ferry::graph_mode::on ? "as a graph" : "plain";
    for (int r = 0; r < 3; ++r) {
      const float seed = 100.0F * static_cast<float>(r) + (graph == ferry::graph_mode::on ? 0.5F : 0.0F);
      const auto at4 = run_rows(s, 4, 3, seed);
      const auto at16 = run_rows(s, 16, 3, seed);
      ASSERT_EQ(at4, at16) << how << ", request " << r;
      for (std::size_t i = 0; i < at4.size(); ++i)
        ASSERT_EQ(at4[i], 2.0F * (seed + static_cast<float>(i % 977)) + 1.0F) << how << ", element " << i;
      const auto at1 = run_rows(s, 1, 1, seed);
      ASSERT_TRUE(std::equal(at1.begin(), at1.end(), at16.begin())) << how << ", one row";
    }
    auto filling = s.acquire();
    EXPECT_THROW(filling.run_at_rows(5), ferry::invalid_argument);
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, BatchSizesOnEveryStrategy,
                         ::testing::Values(strategy_kind::pinned, strategy_kind::staged, strategy_kind::mapped,
                                           strategy_kind::registered, strategy_kind::managed_prefetch,
                                           strategy_kind::device),
                         strategy_test_name);

TEST(BatchSizes, AContextThatReshapesKeepsOneGraphPerSizeOnOneContext) {
  ferry::test::own_graph_engine eng(false);
  const ferry::shape_binding full[] = {{"x", {16, 256}}};
  ferry::session s(
      eng, eng.resolve(full),
      {.strategy = strategy_kind::pinned, .inflight = 2, .graph = ferry::graph_mode::on, .batch_sizes = {2, 8}},
      ferry::query_device(0));
  ASSERT_TRUE(s.graph().active) << s.graph().reason;
  EXPECT_EQ(s.graph().kind, ferry::graph_kind::engine);
  s.warmup();  // three rounds at each size: each (slot, size) key captured once
  EXPECT_TRUE(s.graph().active) << s.graph().reason;
  EXPECT_EQ(eng.counts.captures, 2 * 3);
  for (const std::int64_t size : {2, 8, 16, 2}) {
    auto filling = s.acquire();
    filling.run_at_rows(size);
    auto* x = reinterpret_cast<float*>(filling.input(0).data());
    const std::size_t n = static_cast<std::size_t>(size) * 256;
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(size) + static_cast<float>(i);
    auto done = std::move(filling).submit().wait();
    const auto* y = reinterpret_cast<const float*>(done.output(0).data());
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], static_cast<float>(size) + static_cast<float>(i)) << size;
  }
  EXPECT_EQ(eng.counts.replays, 4);
  EXPECT_EQ(eng.counts.captures, 2 * 3);
  EXPECT_EQ(eng.counts.failures, 0);
}

TEST(BatchSizes, SizesTheEngineRefusesOrOutOfOrderAreRefusedWhenTheSessionIsMade) {
  ferry::test::own_graph_engine eng(false);
  const ferry::shape_binding full[] = {{"x", {8, 256}}};
  const auto io = eng.resolve(full);
  const auto caps = ferry::query_device(0);
  EXPECT_THROW(ferry::session(eng, io, {.inflight = 1, .batch_sizes = {4, 2}}, caps), ferry::invalid_argument);
  EXPECT_THROW(ferry::session(eng, io, {.inflight = 1, .batch_sizes = {9}}, caps), ferry::invalid_argument);
  EXPECT_THROW(ferry::session(eng, io, {.inflight = 1, .batch_sizes = {0}}, caps), ferry::invalid_argument);
}

}  // namespace
