// engine_context's public calls: the checks every backend gets before its do_* functions run.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "ferry/core/error.hpp"
#include "ferry/engines/engine.hpp"

namespace {

using ferry::invalid_argument;

// Records what reaches the backend's side of the seam.
class recording_context final : public ferry::engine_context {
 public:
  recording_context() : engine_context("recorder", {"x", "y"}) {}
  std::vector<std::size_t> bound;
  int enqueued = 0;
  [[nodiscard]] void* address(std::size_t i) const { return device_addresses()[i]; }

 private:
  void do_bind(std::size_t index, void*) override { bound.push_back(index); }
  void do_enqueue(ferry::stream_ref) override { ++enqueued; }
};

template <typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const invalid_argument& e) {
    return e.what();
  }
  return "(no invalid_argument)";
}

alignas(256) unsigned char block[1024];

TEST(EngineContext, BindChecksNameNullAndAlignmentBeforeTheBackend) {
  recording_context c;
  EXPECT_NE(message_of([&] { c.bind("z", block); }).find("valid names are 'x', 'y'"), std::string::npos);
  EXPECT_NE(message_of([&] { c.bind("x", nullptr); }).find("'x' to a null address"), std::string::npos);
  const std::string odd = message_of([&] { c.bind("y", block + 128); });
  EXPECT_NE(odd.find("'y' is not 256-byte aligned"), std::string::npos) << odd;
  EXPECT_TRUE(c.bound.empty());
  c.bind("y", block + 256);
  EXPECT_EQ(c.bound, std::vector<std::size_t>{1});
  EXPECT_EQ(c.address(1), block + 256);
  EXPECT_EQ(c.address(0), nullptr);
}

TEST(EngineContext, EnqueueNamesTheTensorsNotBoundAndRunsOnceAllAre) {
  recording_context c;
  const cudaStream_t some_stream = cudaStreamPerThread;  // never used: do_enqueue only counts
  c.bind("y", block);
  const std::string early = message_of([&] { c.enqueue(some_stream); });
  EXPECT_NE(early.find("recorder: enqueue before binding 'x'"), std::string::npos) << early;
  EXPECT_EQ(c.enqueued, 0);
  c.bind("x", block + 512);
  c.enqueue(some_stream);
  EXPECT_EQ(c.enqueued, 1);
}

// An engine that captures nothing itself refuses graphs of its own, saying so, and has nothing to
// turn off; a negative count is the caller's mistake, refused before the backend sees it.
TEST(EngineContext, GraphsOfItsOwnAreRefusedByDefaultAndANegativeCountIsRefused) {
  recording_context c;
  const auto refusal = c.use_own_graphs(4);
  ASSERT_TRUE(refusal);
  EXPECT_EQ(*refusal, "the engine does not capture CUDA graphs of its own");
  EXPECT_FALSE(c.use_own_graphs(0));
  EXPECT_FALSE(c.own_graphs_failure());
  EXPECT_NE(message_of([&] { (void)c.use_own_graphs(-1); }).find("at least 0 graphs of its own, not -1"),
            std::string::npos);
}

// A backend that offers them gets the count, and what it says comes back as it said it.
TEST(EngineContext, GraphsOfItsOwnReachTheBackendWithTheirCount) {
  class offering final : public ferry::engine_context {
   public:
    offering() : engine_context("offers", {"x"}) {}
    std::vector<int> asked;

   private:
    void do_bind(std::size_t, void*) override {}
    void do_enqueue(ferry::stream_ref) override {}
    std::optional<std::string> do_use_own_graphs(int max_graphs) override {
      asked.push_back(max_graphs);
      if (max_graphs > 100) return "at most 100";
      return std::nullopt;
    }
    std::optional<std::string> do_own_graphs_failure() const override { return "a capture failed"; }
  } c;
  EXPECT_FALSE(c.use_own_graphs(8));
  EXPECT_EQ(c.use_own_graphs(101), "at most 100");
  EXPECT_FALSE(c.use_own_graphs(0));
  EXPECT_EQ(c.asked, (std::vector<int>{8, 101, 0}));
  EXPECT_EQ(c.own_graphs_failure(), "a capture failed");
}

}  // namespace
