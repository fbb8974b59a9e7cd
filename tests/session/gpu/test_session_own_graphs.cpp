// graph_mode::on for an engine a plain stream capture cannot take but that captures graphs of its
// own (tests/support/own_graph_engine.hpp, y = x): the session asks every context for them and
// says so; each slot's key is captured on its third warm-up run and replayed after, every request
// answered from its own bytes with every stage timed; caller memory bound in place is another key,
// not a refusal; an engine whose capture fails (its run synchronises) ends each capture cleanly,
// goes on plainly, and graph() says why after warm-up. The same engine through the C ABI (the
// seam test backend) behaves the same.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <functional>
#include <vector>

#include "core/device_memory.hpp"
#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/engines/model_engine.hpp"
#include "ferry/session/session.hpp"
#include "support/backend_test_paths.hpp"
#include "support/own_graph_engine.hpp"

namespace {

using ferry::graph_kind;
using ferry::test::own_graph_engine;

constexpr std::size_t elements = 16 * 256;

// One request of fresh values through the slot's host views; whether the output equals them.
bool answers(ferry::session& s, float seed) {
  auto filling = s.acquire();
  auto* in = reinterpret_cast<float*>(filling.input(0).data());
  for (std::size_t i = 0; i < elements; ++i) in[i] = seed + static_cast<float>(i);
  auto done = std::move(filling).submit().wait();
  const auto* out = reinterpret_cast<const float*>(done.output(0).data());
  for (std::size_t i = 0; i < elements; ++i)
    if (out[i] != seed + static_cast<float>(i)) return false;
  return done.times().compute_ms.has_value();  // the slot's stages stay timed around the graph
}

ferry::session make_session(ferry::engine& eng, ferry::graph_mode graph, int slots = 2) {
  return {eng,
          eng.resolve({}),
          {.strategy = ferry::strategy_kind::pinned, .inflight = slots, .graph = graph},
          ferry::query_device(0)};
}

TEST(SessionOwnGraphs, AnEngineAPlainCaptureCannotTakeCapturesItsOwnAfterWarmUpAndReplaysThem) {
  own_graph_engine eng(false);
  auto s = make_session(eng, ferry::graph_mode::on);
  EXPECT_TRUE(s.graph().active) << s.graph().reason;
  EXPECT_EQ(s.graph().kind, graph_kind::engine);
  s.warmup();  // three rounds: two plain runs per slot, then its capture
  EXPECT_TRUE(s.graph().active) << s.graph().reason;
  EXPECT_EQ(eng.counts.captures, 2);
  EXPECT_EQ(eng.counts.replays, 0);
  for (int r = 0; r < 12; ++r) EXPECT_TRUE(answers(s, static_cast<float>(1000 * r))) << "request " << r;
  EXPECT_EQ(eng.counts.replays, 12);
  EXPECT_EQ(eng.counts.captures, 2);
  EXPECT_EQ(eng.counts.failures, 0);
}

TEST(SessionOwnGraphs, CallerMemoryBoundInPlaceIsAnotherKeyNotARefusal) {
  own_graph_engine eng(false);
  auto s = make_session(eng, ferry::graph_mode::on, 1);
  s.warmup();
  const ferry::core::device_memory caller = ferry::core::allocate_device(elements * sizeof(float));
  const std::span<const std::byte> memory(static_cast<const std::byte*>(caller.get()), elements * sizeof(float));
  for (int r = 0; r < 5; ++r) {
    std::vector<float> values(elements, static_cast<float>(r) + 0.5F);
    FERRY_CUDA_TRY(cudaMemcpy(caller.get(), values.data(), memory.size(), cudaMemcpyHostToDevice));
    auto filling = s.acquire();
    ASSERT_FALSE(filling.input_in_place_refusal(0, memory)) << "the engine's own graphs fix no address";
    filling.use_caller_input(0, memory);
    auto done = std::move(filling).submit().wait();
    const auto* out = reinterpret_cast<const float*>(done.output(0).data());
    EXPECT_EQ(out[0], values[0]) << "request " << r;
    EXPECT_EQ(out[elements - 1], values[0]) << "request " << r;
  }
  // Two plain runs, its capture, two replays; the slot's own buffers kept their graph.
  EXPECT_EQ(eng.counts.captures, 2);
  EXPECT_EQ(eng.counts.replays, 2);
  EXPECT_TRUE(answers(s, 7.0F));
  EXPECT_EQ(eng.counts.replays, 3);
}

TEST(SessionOwnGraphs, ACaptureThatFailsEndsCleanlyTheRunGoesOnPlainlyAndTheSessionSaysWhy) {
  own_graph_engine eng(true);
  auto s = make_session(eng, ferry::graph_mode::on);
  EXPECT_TRUE(s.graph().active);  // nothing was captured yet
  s.warmup();
  EXPECT_FALSE(s.graph().active);
  EXPECT_EQ(s.graph().kind, graph_kind::engine);
  EXPECT_NE(s.graph().reason.find("capture failed"), std::string::npos) << s.graph().reason;
  EXPECT_NE(s.graph().reason.find("synchronises"), std::string::npos) << s.graph().reason;
  EXPECT_EQ(eng.counts.failures, 2);  // once per slot, never again
  for (int r = 0; r < 6; ++r) EXPECT_TRUE(answers(s, static_cast<float>(r))) << "request " << r;
  EXPECT_EQ(eng.counts.failures, 2);
  EXPECT_EQ(eng.counts.replays, 0);
}

TEST(SessionOwnGraphs, WithoutGraphsAskedNoContextCapturesAnything) {
  own_graph_engine eng(false);
  auto s = make_session(eng, ferry::graph_mode::off);
  s.warmup();
  for (int r = 0; r < 4; ++r) EXPECT_TRUE(answers(s, static_cast<float>(r)));
  EXPECT_EQ(s.graph().kind, graph_kind::none);
  EXPECT_EQ(eng.counts.captures, 0);
  EXPECT_EQ(eng.counts.replays, 0);
}

// warmup() and refresh_graph_status() wait for every slot: called by a thread that still holds one,
// they refuse, naming the cause, where they would wait for ever; with the slot let go they work.
TEST(SessionOwnGraphs, WaitingForEverySlotWhileHoldingOneIsRefusedNotAHang) {
  own_graph_engine eng(false);
  auto s = make_session(eng, ferry::graph_mode::on);
  s.warmup();
  {
    auto done = s.acquire().submit().wait();
    const std::vector<std::function<void()>> waits_for_every_slot = {[&s] { (void)s.refresh_graph_status(); },
                                                                     [&s] { s.warmup(1); }};
    for (const auto& call : waits_for_every_slot) {
      try {
        call();
        ADD_FAILURE() << "a call that waits for every slot returned while this thread held one";
      } catch (const ferry::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("still holds one"), std::string::npos) << e.what();
      }
    }
    EXPECT_EQ(s.slots_in_use(), 1);
  }
  EXPECT_TRUE(s.refresh_graph_status().active) << s.graph().reason;
  EXPECT_TRUE(answers(s, 3.0F));
}

TEST(SessionOwnGraphs, ThroughTheCAbiAsInProcess) {
  const std::vector<std::filesystem::path> dirs = {ferry::test::test_backend_dir()};
  for (const char* spec : {"seam:own-graphs", "seam:own-graphs-sync"}) {
    SCOPED_TRACE(spec);
    auto eng = ferry::load_model_engine(spec, {.device = 0, .max_concurrency = 2, .backend_directories = dirs});
    auto s = make_session(*eng, ferry::graph_mode::on);
    s.warmup();
    EXPECT_EQ(s.graph().kind, graph_kind::engine);
    const bool synchronises = std::string(spec).ends_with("-sync");
    EXPECT_EQ(s.graph().active, !synchronises) << s.graph().reason;
    if (synchronises) EXPECT_NE(s.graph().reason.find("synchronises"), std::string::npos) << s.graph().reason;
    for (int r = 0; r < 4; ++r) EXPECT_TRUE(answers(s, static_cast<float>(r)));
  }
}

}  // namespace
