// Backend plugins on the GPU: the example backend (plain C, examples/backend) and `seam` (built-ins
// exported through the C++ side the torch and TensorRT backends use) run through ferry sessions
// under every kind of strategy, as CUDA graphs too, with several contexts in flight at once, and
// answer exactly what the in-process engines answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "ferry/device/device_caps.hpp"
#include "ferry/engines/builtin.hpp"
#include "ferry/engines/model_engine.hpp"
#include "ferry/session/session.hpp"
#include "support/backend_test_paths.hpp"

namespace {

ferry::model_engine_options on_gpu(int slots) {
  return {.device = 0,
          .max_concurrency = slots,
          .backend_directories = {ferry::test::example_backend_dir(), ferry::test::test_backend_dir()}};
}

std::vector<float> inputs_for(int request, std::size_t count) {
  std::vector<float> x(count);
  for (std::size_t i = 0; i < count; ++i)
    x[i] = static_cast<float>(request) * 1.5F - 0.25F * static_cast<float>(i % 977);
  return x;
}

// Runs `requests` requests, `in_flight` of them submitted before the first is waited for, and
// counts outputs that differ from 2x + 1 (what both the example and touch compute).
int wrong_answers(ferry::session& s, int requests, int in_flight) {
  int wrong = 0;
  std::vector<std::pair<ferry::pending_slot, std::vector<float>>> pending;
  const auto check = [&](std::pair<ferry::pending_slot, std::vector<float>>& p) {
    auto done = std::move(p.first).wait();
    done.download_resident_outputs();
    const auto y = done.output(0);
    std::vector<float> got(y.size() / sizeof(float));
    std::memcpy(got.data(), y.data(), y.size());
    for (std::size_t i = 0; i < got.size(); ++i) wrong += got[i] != std::fmaf(p.second[i], 2.0F, 1.0F);
  };
  for (int r = 0; r < requests; ++r) {
    if (static_cast<int>(pending.size()) == in_flight) {
      check(pending.front());
      pending.erase(pending.begin());
    }
    auto filling = s.acquire();
    auto x = inputs_for(r, filling.input(0).size() / sizeof(float));
    std::memcpy(filling.input(0).data(), x.data(), filling.input(0).size());
    filling.upload_resident_inputs();
    pending.emplace_back(std::move(filling).submit(), std::move(x));
  }
  for (auto& p : pending) check(p);
  return wrong;
}

class ExampleBackendOnGpu : public ::testing::TestWithParam<ferry::strategy_kind> {};

TEST_P(ExampleBackendOnGpu, AnswersAsTouchWithSlotsInFlightAndAsAGraph) {
  const auto caps = ferry::query_device(0);
  if (auto reason = ferry::unavailable_reason(GetParam(), caps)) GTEST_SKIP() << *reason;
  auto eng = ferry::load_model_engine("affine:" + ferry::test::example_model().string(), on_gpu(4));
  const ferry::shape_binding batch[] = {{"x", {16, 1024}}};
  const auto io = eng->resolve(batch);
  for (const auto graph : {ferry::graph_mode::off, ferry::graph_mode::on}) {
    ferry::session s(*eng, io, {.strategy = GetParam(), .inflight = 4, .graph = graph}, caps);
    s.warmup();
    if (graph == ferry::graph_mode::on) {
      // The plugin's one kernel launch captures: pinned's pipeline (a DMA, the kernel, a DMA) and
      // the floor's must run as graphs; other strategies may refuse, saying why, as built-ins do.
      if (GetParam() == ferry::strategy_kind::pinned || GetParam() == ferry::strategy_kind::device)
        EXPECT_TRUE(s.graph().active) << s.graph().reason;
      else if (!s.graph().active)
        EXPECT_FALSE(s.graph().reason.empty());
    }
    EXPECT_EQ(wrong_answers(s, 24, 4), 0) << (graph == ferry::graph_mode::on ? "as a graph" : "plain");
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, ExampleBackendOnGpu,
                         ::testing::Values(ferry::strategy_kind::pinned, ferry::strategy_kind::staged,
                                           ferry::strategy_kind::mapped, ferry::strategy_kind::managed_prefetch,
                                           ferry::strategy_kind::device),
                         [](const auto& info) {
                           std::string n(ferry::to_string(info.param));
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(BackendPluginsOnGpu, SessionsOnSeveralThreadsShareOneLoadedModel) {
  const auto caps = ferry::query_device(0);
  auto eng = ferry::load_model_engine("affine:" + ferry::test::example_model().string(), on_gpu(8));
  const ferry::shape_binding batch[] = {{"x", {3, 1024}}};
  const auto io = eng->resolve(batch);
  std::vector<int> wrong(4, -1);
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c)
    clients.emplace_back([&, c] {
      ferry::session s(*eng, io, {.strategy = ferry::strategy_kind::pinned, .inflight = 2}, caps);
      wrong[static_cast<std::size_t>(c)] = wrong_answers(s, 40, 2);
    });
  for (auto& t : clients) t.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
}

// A backend built against version 1 of the ABI has no graph functions: its contexts refuse graphs
// of their own, naming the version, and a session asked for graphs captures their pipeline plainly.
TEST(BackendPluginsOnGpu, AVersionOneBackendsContextsRefuseGraphsOfTheirOwnByName) {
  const auto caps = ferry::query_device(0);
  auto eng = ferry::load_model_engine("apiv1:" + ferry::test::example_model().string(), on_gpu(2));
  const ferry::shape_binding batch[] = {{"x", {4, 1024}}};
  const auto io = eng->resolve(batch);
  const auto context = eng->make_context(io);
  const auto refusal = context->use_own_graphs(4);
  ASSERT_TRUE(refusal);
  EXPECT_NE(refusal->find("backend 'apiv1' (backend API version 1) does not capture CUDA graphs of its own"),
            std::string::npos)
      << *refusal;
  EXPECT_FALSE(context->own_graphs_failure());
  ferry::session s(*eng, io, {.strategy = ferry::strategy_kind::pinned, .inflight = 2, .graph = ferry::graph_mode::on},
                   caps);
  s.warmup();
  EXPECT_TRUE(s.graph().active) << s.graph().reason;
  EXPECT_EQ(s.graph().kind, ferry::graph_kind::pipeline);
  EXPECT_EQ(wrong_answers(s, 8, 2), 0);
}

TEST(BackendPluginsOnGpu, TheCxxSeamRunsABuiltInAsTheInProcessOneDoes) {
  const auto caps = ferry::query_device(0);
  auto plugin = ferry::load_model_engine("seam:touch", on_gpu(2));
  const auto in_process = ferry::make_builtin_engine("touch", {.input_bytes = std::size_t{1} << 20, .batch = 16});
  for (ferry::engine* eng : {plugin.get(), static_cast<ferry::engine*>(in_process.get())}) {
    ferry::session s(*eng, eng->resolve({}), {.strategy = ferry::strategy_kind::pinned, .inflight = 2}, caps);
    EXPECT_EQ(wrong_answers(s, 10, 2), 0) << eng->name();
  }
}

}  // namespace
