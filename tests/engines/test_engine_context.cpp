// engine_context's public calls: the checks every backend gets before its do_* functions run.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ferry/engine.hpp"
#include "ferry/error.hpp"

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

}  // namespace
