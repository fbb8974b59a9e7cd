// The graph cache's policy (src/engines/graph_cache.hpp) through a fake engine that does what a
// backend does with each plan: runs plainly, "captures" a graph (or fails to, where told to), or
// replays it. No GPU, no framework.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engines/graph_cache.hpp"
#include "ferry/core/error.hpp"

namespace {

using ferry::graph_key;
using ferry::graph_step;

// A graph that knows its key's name and says when it is destroyed.
struct fake_graph {
  std::string name;
  std::shared_ptr<std::vector<std::string>> destroyed;
  int replays = 0;
  fake_graph(std::string n, std::shared_ptr<std::vector<std::string>> log)
      : name(std::move(n)), destroyed(std::move(log)) {}
  fake_graph(fake_graph&& other) noexcept
      : name(std::move(other.name)), destroyed(std::move(other.destroyed)), replays(other.replays) {}
  fake_graph(const fake_graph&) = delete;
  fake_graph& operator=(const fake_graph&) = delete;
  fake_graph& operator=(fake_graph&&) = delete;
  ~fake_graph() {
    if (destroyed) destroyed->push_back(name);
  }
};

// What a backend's enqueue does with the cache: one call per request of `key`.
class fake_engine {
 public:
  explicit fake_engine(std::size_t max_graphs, int warmup = ferry::default_graph_warmup_runs,
                       std::size_t remembered = ferry::default_graph_keys_remembered)
      : cache(max_graphs, warmup, remembered) {}

  // Runs one request of `key` ("name" identifies it in the logs); returns what was done.
  graph_step run(const std::string& name, const graph_key& key) {
    const auto plan = cache.next(key);
    switch (plan.step) {
      case graph_step::run_plain:
        ++plain[name];
        break;
      case graph_step::capture:
        ++captures[name];
        if (fails.contains(name))
          cache.capture_failed(key, "the run of '" + name + "' synchronises");
        else
          cache.captured(key, fake_graph(name, destroyed));
        break;
      case graph_step::replay:
        EXPECT_NE(plan.graph, nullptr);
        EXPECT_EQ(plan.graph->name, name) << "replayed another key's graph";
        ++plan.graph->replays;
        ++replays[name];
        break;
    }
    return plan.step;
  }

  ferry::graph_cache<fake_graph> cache;
  std::set<std::string> fails;  // keys whose capture fails
  std::map<std::string, int> plain, captures, replays;
  std::shared_ptr<std::vector<std::string>> destroyed = std::make_shared<std::vector<std::string>>();
};

alignas(256) unsigned char memory[8][256];

graph_key key_at(std::vector<std::int64_t> dims, int input, int output) {
  return {std::move(dims), {memory[input], memory[output]}};
}

TEST(GraphCache, AKeyRunsPlainlyWhileItWarmsUpThenIsCapturedOnceAndReplayed) {
  fake_engine e(4);
  const graph_key k = key_at({16, 3, 224, 224, 16, 1000}, 0, 1);
  EXPECT_EQ(e.run("k", k), graph_step::run_plain);
  EXPECT_EQ(e.run("k", k), graph_step::run_plain);
  EXPECT_EQ(e.run("k", k), graph_step::capture);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(e.run("k", k), graph_step::replay);
  EXPECT_EQ(e.plain["k"], 2);
  EXPECT_EQ(e.captures["k"], 1);
  EXPECT_EQ(e.replays["k"], 5);
  EXPECT_EQ(e.cache.graphs(), 1U);
  EXPECT_EQ(e.cache.counts().captures, 1U);
  EXPECT_EQ(e.cache.counts().replays, 5U);
  EXPECT_EQ(e.cache.counts().plain_runs, 2U);
  EXPECT_FALSE(e.cache.first_failure());
}

TEST(GraphCache, TheWarmUpCountIsTheBackendsChoice) {
  fake_engine now(4, 0);
  const graph_key k = key_at({1}, 0, 1);
  EXPECT_EQ(now.run("k", k), graph_step::capture);
  EXPECT_EQ(now.run("k", k), graph_step::replay);
  fake_engine later(4, 5);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(later.run("k", k), graph_step::run_plain) << "run " << i;
  EXPECT_EQ(later.run("k", k), graph_step::capture);
}

TEST(GraphCache, ShapesAndEveryBoundAddressMakeTheKey) {
  fake_engine e(8);
  const graph_key base = key_at({16, 4}, 0, 1);
  const graph_key other_batch = key_at({8, 4}, 0, 1);    // a dynamic batch: another graph
  const graph_key other_input = key_at({16, 4}, 2, 1);   // caller memory for the input
  const graph_key other_output = key_at({16, 4}, 0, 3);  // an output bound in place
  const graph_key same_again = key_at({16, 4}, 0, 1);    // equal by value
  EXPECT_EQ(base, same_again);
  EXPECT_EQ(ferry::graph_key_hash{}(base), ferry::graph_key_hash{}(same_again));
  EXPECT_NE(base, other_batch);
  EXPECT_NE(base, other_input);
  EXPECT_NE(base, other_output);
  for (int i = 0; i < 3; ++i) {
    (void)e.run("base", base);
    (void)e.run("batch", other_batch);
    (void)e.run("input", other_input);
    (void)e.run("output", other_output);
  }
  EXPECT_EQ(e.cache.graphs(), 4U);
  EXPECT_EQ(e.run("base", same_again), graph_step::replay);  // fake_engine checks it is base's graph
  EXPECT_EQ(e.run("batch", other_batch), graph_step::replay);
  EXPECT_EQ(e.run("input", other_input), graph_step::replay);
  EXPECT_EQ(e.run("output", other_output), graph_step::replay);
}

TEST(GraphCache, BeyondTheBoundTheLeastRecentlyUsedGraphIsDroppedAndWarmsUpAgain) {
  fake_engine e(2);
  const graph_key a = key_at({1}, 0, 1), b = key_at({1}, 2, 3), c = key_at({1}, 4, 5);
  for (int i = 0; i < 3; ++i) {
    (void)e.run("a", a);
    (void)e.run("b", b);
  }
  EXPECT_EQ(e.cache.graphs(), 2U);
  EXPECT_EQ(e.run("a", a), graph_step::replay);  // a is now more recent than b
  for (int i = 0; i < 3; ++i) (void)e.run("c", c);
  EXPECT_EQ(e.cache.graphs(), 2U);
  EXPECT_EQ(e.cache.counts().evictions, 1U);
  ASSERT_EQ(*e.destroyed, std::vector<std::string>{"b"});  // the dropped graph is destroyed
  EXPECT_EQ(e.run("a", a), graph_step::replay);
  EXPECT_EQ(e.run("c", c), graph_step::replay);
  // b comes back as a new key: warm-up, capture, and now a is the least recently used.
  EXPECT_EQ(e.run("b", b), graph_step::run_plain);
  EXPECT_EQ(e.run("b", b), graph_step::run_plain);
  EXPECT_EQ(e.run("b", b), graph_step::capture);
  EXPECT_EQ(*e.destroyed, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(e.captures["b"], 2);
  EXPECT_EQ(e.run("c", c), graph_step::replay);
}

TEST(GraphCache, AFailedCaptureIsRememberedWithItsReasonAndNeverTriedAgain) {
  fake_engine e(4);
  e.fails = {"sync"};
  const graph_key bad = key_at({2}, 0, 1), good = key_at({2}, 2, 3);
  for (int i = 0; i < 20; ++i) {
    (void)e.run("sync", bad);
    (void)e.run("fine", good);
  }
  EXPECT_EQ(e.captures["sync"], 1) << "a key whose capture failed was captured again";
  EXPECT_EQ(e.plain["sync"], 19);  // two warm-up runs, then plain after the failure
  EXPECT_FALSE(e.replays.contains("sync"));
  EXPECT_EQ(e.replays["fine"], 17);
  EXPECT_EQ(e.cache.refusal(bad), "the run of 'sync' synchronises");
  EXPECT_FALSE(e.cache.refusal(good));
  EXPECT_FALSE(e.cache.refusal(key_at({2}, 4, 5)));  // unknown
  EXPECT_EQ(e.cache.first_failure(), "the run of 'sync' synchronises");
  EXPECT_EQ(e.cache.counts().failures, 1U);
  EXPECT_EQ(e.cache.graphs(), 1U);
}

TEST(GraphCache, KeysThatNeverWarmUpOrFailAreBoundedToo) {
  fake_engine e(2, 2, 3);
  // Ever new addresses, each seen once: only the three most recent are remembered.
  std::vector<graph_key> once;
  for (int i = 0; i < 8; ++i) once.push_back({{i}, {memory[0]}});
  for (int i = 0; i < 8; ++i) EXPECT_EQ(e.run("once", once[i]), graph_step::run_plain);
  // The newest is one run from its capture; the oldest was forgotten and warms up from the start.
  EXPECT_EQ(e.run("once", once[7]), graph_step::run_plain);
  EXPECT_EQ(e.run("once", once[7]), graph_step::capture);
  EXPECT_EQ(e.run("once", once[0]), graph_step::run_plain);
  EXPECT_EQ(e.run("once", once[0]), graph_step::run_plain);
  EXPECT_EQ(e.run("once", once[0]), graph_step::capture);
  // Failed keys: the first failure's reason outlives its key.
  fake_engine f(2, 0, 2);
  f.fails = {"x"};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(f.run("x", once[i]), graph_step::capture);
  EXPECT_FALSE(f.cache.refusal(once[0]));  // forgotten: at most two failed keys kept
  EXPECT_TRUE(f.cache.refusal(once[3]));
  EXPECT_EQ(f.cache.first_failure(), "the run of 'x' synchronises");
  EXPECT_EQ(f.run("x", once[3]), graph_step::run_plain);
}

TEST(GraphCache, ClearDropsEveryGraph) {
  fake_engine e(4, 0);
  (void)e.run("a", key_at({1}, 0, 1));
  (void)e.run("b", key_at({1}, 2, 3));
  EXPECT_EQ(e.cache.graphs(), 2U);
  e.cache.clear();
  EXPECT_EQ(e.cache.graphs(), 0U);
  EXPECT_EQ(e.destroyed->size(), 2U);
  EXPECT_EQ(e.run("a", key_at({1}, 0, 1)), graph_step::capture);
}

TEST(GraphCache, RefusesABoundItCannotKeep) {
  EXPECT_THROW(ferry::graph_cache<int>(0), ferry::invalid_argument);
  EXPECT_THROW(ferry::graph_cache<int>(1, -1), ferry::invalid_argument);
  EXPECT_THROW(ferry::graph_cache<int>(1, 2, 0), ferry::invalid_argument);
}

}  // namespace
