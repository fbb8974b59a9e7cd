// graph_mode::automatic on the GPU: nothing is captured until warmup(), which times rounds without
// graphs, starts them, times rounds with them, and keeps them only where graphs_pay says so; the
// figures stay in graph() either way, answers are right either way, and a second warm-up does not
// run the trial again. A capture that fails (an engine that synchronises) ends the trial with the
// reason and nothing timed. Both kinds: the engine's own graphs (tests/support/own_graph_engine.hpp)
// and the session's capture of a slot's pipeline (touch).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "ferry/device/device_caps.hpp"
#include "ferry/engines/builtin.hpp"
#include "ferry/session/session.hpp"
#include "support/own_graph_engine.hpp"

namespace {

using ferry::graph_kind;
using ferry::test::own_graph_engine;

// One request of fresh floats through the slot's host views; whether `expected(x)` came back.
template <typename Expected>
bool answers(ferry::session& s, float seed, Expected expected) {
  auto filling = s.acquire();
  const std::size_t n = filling.input(0).size() / sizeof(float);
  auto* in = reinterpret_cast<float*>(filling.input(0).data());
  for (std::size_t i = 0; i < n; ++i) in[i] = seed + static_cast<float>(i % 1000);
  auto done = std::move(filling).submit().wait();
  const auto* out = reinterpret_cast<const float*>(done.output(0).data());
  for (std::size_t i = 0; i < n; ++i)
    if (out[i] != expected(seed + static_cast<float>(i % 1000))) return false;
  return true;
}

ferry::session make_session(ferry::engine& eng, int slots = 2) {
  return {eng,
          eng.resolve({}),
          {.strategy = ferry::strategy_kind::pinned, .inflight = slots, .graph = ferry::graph_mode::automatic},
          ferry::query_device(0)};
}

// What the trial left, checked the same way whichever way it went.
void expect_a_measured_choice(const ferry::session& s, graph_kind kind) {
  const auto& g = s.graph();
  ASSERT_TRUE(g.measured.has_value()) << g.reason;
  EXPECT_EQ(g.measured->rounds, ferry::graph_trial_rounds);
  EXPECT_EQ(g.measured->slots, s.slots());
  EXPECT_GT(g.measured->without_us, 0);
  EXPECT_GT(g.measured->with_us, 0);
  EXPECT_EQ(g.active, ferry::graphs_pay(*g.measured)) << ferry::describe(*g.measured);
  if (g.active) {
    EXPECT_EQ(g.kind, kind);
  } else {
    EXPECT_EQ(g.kind, graph_kind::none);
    EXPECT_NE(g.reason.find("not used"), std::string::npos) << g.reason;
  }
}

TEST(SessionGraphChoice, TheEnginesOwnGraphsAreTimedBothWaysAndKeptOnlyWhereTheyPay) {
  own_graph_engine eng(false);
  auto s = make_session(eng);
  EXPECT_FALSE(s.graph().active);  // nothing started before the trial
  EXPECT_FALSE(s.graph().measured.has_value());
  s.warmup();
  EXPECT_EQ(eng.counts.captures, 2);  // one per slot, on the warm-up rounds after the plain ones
  expect_a_measured_choice(s, graph_kind::engine);
  const bool kept = s.graph().active;
  const int replays = eng.counts.replays;
  for (int r = 0; r < 6; ++r) EXPECT_TRUE(answers(s, static_cast<float>(r), [](float x) { return x; }));
  EXPECT_EQ(eng.counts.replays, kept ? replays + 6 : replays) << "graphs dropped must not replay";
}

TEST(SessionGraphChoice, TheSessionsPipelineGraphsAreTimedBothWaysAndAnswersStayRight) {
  auto eng = ferry::make_builtin_engine("touch", {.input_bytes = std::size_t{64} << 10});
  auto s = make_session(*eng);
  s.warmup();
  expect_a_measured_choice(s, graph_kind::pipeline);
  for (int r = 0; r < 6; ++r)
    EXPECT_TRUE(answers(s, static_cast<float>(r), [](float x) { return x * 2.0F + 1.0F; })) << "request " << r;
}

TEST(SessionGraphChoice, ASecondWarmUpDoesNotRunTheTrialAgain) {
  own_graph_engine eng(false);
  auto s = make_session(eng);
  s.warmup();
  ASSERT_TRUE(s.graph().measured.has_value());
  const ferry::graph_measurement first = *s.graph().measured;
  const int captures = eng.counts.captures;
  s.warmup(1);
  ASSERT_TRUE(s.graph().measured.has_value());
  EXPECT_EQ(s.graph().measured->without_us, first.without_us);
  EXPECT_EQ(s.graph().measured->with_us, first.with_us);
  EXPECT_EQ(eng.counts.captures, captures);
}

TEST(SessionGraphChoice, ACaptureThatFailsEndsTheTrialWithTheReasonAndRunsPlainly) {
  own_graph_engine eng(true);
  auto s = make_session(eng);
  s.warmup();
  EXPECT_FALSE(s.graph().active);
  EXPECT_FALSE(s.graph().measured.has_value());
  EXPECT_NE(s.graph().reason.find("synchronises"), std::string::npos) << s.graph().reason;
  for (int r = 0; r < 4; ++r) EXPECT_TRUE(answers(s, static_cast<float>(r), [](float x) { return x; }));
  EXPECT_EQ(eng.counts.replays, 0);
}

}  // namespace
