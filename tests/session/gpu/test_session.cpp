// Sessions on the GPU: many clients share a few slots, and every request gets back exactly the
// output of its own input, under every strategy, with and without CUDA graphs.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <thread>

#include "bench/measure/cell_runner.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/bench/workload_factory.hpp"
#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/engines/builtin.hpp"
#include "ferry/session/session.hpp"
#include "support/strategy_test_name.hpp"

namespace {

using ferry::strategy_kind;

class SessionOnEveryStrategy : public ::testing::TestWithParam<strategy_kind> {
 protected:
  void SetUp() override {
    caps_ = ferry::query_device(0);
    if (auto reason = ferry::unavailable_reason(GetParam(), caps_)) GTEST_SKIP() << *reason;
  }
  ferry::device_caps caps_;
};

// Each request writes a value unique to (client, request) into every element; touch computes
// 2x+1, so any mix-up between slots or clients shows as a wrong value.
void run_clients(ferry::session& s, int clients, int requests_per_client, std::atomic<int>& wrong) {
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      // An exception must not escape the thread (std::terminate would end the whole suite):
      // it counts as a wrong answer and its message is reported.
      try {
        for (int r = 0; r < requests_per_client; ++r) {
          const float tag = static_cast<float>(c * 1000 + r);
          auto filling = s.acquire();
          auto in = filling.input(0);
          auto* values = reinterpret_cast<float*>(in.data());
          const std::size_t n = in.size() / sizeof(float);
          for (std::size_t i = 0; i < n; ++i) values[i] = tag + static_cast<float>(i % 7);
          filling.upload_resident_inputs();
          auto done = std::move(filling).submit().wait();
          done.download_resident_outputs();
          const auto out = done.output(0);
          const auto* results = reinterpret_cast<const float*>(out.data());
          for (std::size_t i = 0; i < n; ++i) {
            if (results[i] != (tag + static_cast<float>(i % 7)) * 2.0F + 1.0F) {
              ++wrong;
              break;
            }
          }
        }
      } catch (const std::exception& e) {
        ++wrong;
        ADD_FAILURE() << "client " << c << ": " << e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
}

TEST_P(SessionOnEveryStrategy, ManyClientsEachGetTheirOwnAnswer) {
  auto eng = ferry::make_builtin_engine("touch", {.input_bytes = std::size_t{1} << 20});
  const auto io = eng->resolve({});
  ferry::session s(*eng, io, {.strategy = GetParam(), .inflight = 3}, caps_);
  s.warmup();
  std::atomic<int> wrong{0};
  run_clients(s, 8, 25, wrong);
  EXPECT_EQ(wrong.load(), 0) << "requests got another request's data";
}

// Once wait_inputs_consumed() returns, the engine no longer needs the input's host memory:
// scribbling over it must not change the answer of the request in flight. As a captured graph
// too: there the marker is a node of the graph, recorded by every launch.
TEST_P(SessionOnEveryStrategy, InputsMayBeOverwrittenOnceConsumed) {
  auto eng = ferry::make_builtin_engine("touch", {.input_bytes = std::size_t{8} << 20});
  for (const auto graph : {ferry::graph_mode::off, ferry::graph_mode::on}) {
    SCOPED_TRACE(graph == ferry::graph_mode::on ? "graph" : "stream");
    ferry::session s(*eng, eng->resolve({}), {.strategy = GetParam(), .inflight = 2, .graph = graph}, caps_);
    for (int round = 0; round < 5; ++round) {
      auto filling = s.acquire();
      auto in = filling.input(0);
      auto* values = reinterpret_cast<float*>(in.data());
      const std::size_t n = in.size() / sizeof(float);
      for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<float>(round + static_cast<int>(i % 13));
      filling.upload_resident_inputs();
      auto pending = std::move(filling).submit();
      pending.wait_inputs_consumed();
      std::memset(values, 0xFF, in.size());  // NaN everywhere: any late read shows in the output
      auto done = std::move(pending).wait();
      done.download_resident_outputs();
      const auto* results = reinterpret_cast<const float*>(done.output(0).data());
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i)
        wrong += results[i] != static_cast<float>(round + static_cast<int>(i % 13)) * 2.0F + 1.0F;
      EXPECT_EQ(wrong, 0U) << "round " << round;
    }
  }
}

// Page-aligned host floats registered with CUDA for as long as the test needs them, released
// even when an assertion throws (a range left registered would fail every later registration).
struct registered_floats {
  explicit registered_floats(std::size_t n)
      : memory(static_cast<float*>(std::aligned_alloc(4096, (n * sizeof(float) + 4095) / 4096 * 4096))),
        values(memory.get(), n) {
    FERRY_CUDA_TRY(cudaHostRegister(memory.get(), n * sizeof(float), cudaHostRegisterDefault));
  }
  ~registered_floats() { FERRY_CUDA_TRY_NOTHROW(cudaHostUnregister(memory.get())); }
  registered_floats(const registered_floats&) = delete;
  registered_floats& operator=(const registered_floats&) = delete;
  struct free_deleter {
    void operator()(float* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<float, free_deleter> memory;
  std::span<float> values;
};

// A request can read its input straight from the caller's registered memory (a client's shared
// memory region): the answer is the caller's data, the slot's own host view is left alone, and
// the next request without caller memory reads the slot's own buffer again.
TEST_P(SessionOnEveryStrategy, CallerMemoryFeedsAnInputWithoutStaging) {
  auto eng = ferry::make_builtin_engine("touch", {.input_bytes = std::size_t{1} << 20});
  ferry::session s(*eng, eng->resolve({}), {.strategy = GetParam(), .inflight = 1}, caps_);
  const std::size_t n = (std::size_t{1} << 20) / sizeof(float);
  registered_floats registered(n + 64);  // 64 more to make a misaligned range of n from
  const std::span<float> caller = registered.values.first(n);
  for (std::size_t i = 0; i < n; ++i) caller[i] = static_cast<float>(i % 11) + 100.0F;
  auto expect_output = [&](ferry::completed_slot& done, float base, const char* what) {
    done.download_resident_outputs();
    const auto* out = reinterpret_cast<const float*>(done.output(0).data());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += out[i] != (static_cast<float>(i % 11) + base) * 2.0F + 1.0F;
    EXPECT_EQ(wrong, 0U) << what;
  };
  const auto path = ferry::properties(GetParam()).path;
  const bool managed = path == ferry::data_path::migrate;
  for (int round = 0; round < 2; ++round) {
    auto filling = s.acquire();
    auto own = filling.input(0);
    auto* own_values = reinterpret_cast<float*>(own.data());
    for (std::size_t i = 0; i < n; ++i) own_values[i] = static_cast<float>(i % 11) + 5.0F;
    filling.upload_resident_inputs();
    const auto memory = std::as_bytes(std::span<const float>(caller));
    if (managed) {
      EXPECT_THROW(filling.use_caller_input(0, memory), ferry::unsupported);
      (void)std::move(filling).submit().wait();
      continue;
    }
    filling.use_caller_input(0, memory);
    auto done = std::move(filling).submit().wait();
    expect_output(done, 100.0F, "caller memory");
  }
  {  // the next request without caller memory reads the slot's own view again
    auto filling = s.acquire();
    auto* own_values = reinterpret_cast<float*>(filling.input(0).data());
    for (std::size_t i = 0; i < n; ++i) own_values[i] = static_cast<float>(i % 11) + 7.0F;
    filling.upload_resident_inputs();
    auto done = std::move(filling).submit().wait();
    expect_output(done, 7.0F, "own buffer after caller memory");
  }
  if (!managed) {  // wrong size, unregistered memory, and (read in place) a misaligned address are refused
    auto filling = s.acquire();
    std::vector<float> unregistered(n);
    EXPECT_THROW(filling.use_caller_input(0, std::as_bytes(caller.first(n - 1))), ferry::invalid_argument);
    EXPECT_THROW(filling.use_caller_input(0, std::as_bytes(std::span<const float>(unregistered))),
                 ferry::invalid_argument);
    const auto misaligned = std::as_bytes(registered.values.subspan(4, n));  // 16 bytes in
    if (path == ferry::data_path::zero_copy) {
      EXPECT_THROW(filling.use_caller_input(0, misaligned), ferry::invalid_argument);
    } else {  // copy strategies DMA from any address
      filling.use_caller_input(0, misaligned);
      auto done = std::move(filling).submit().wait();
      done.download_resident_outputs();
      const auto* out = reinterpret_cast<const float*>(done.output(0).data());
      EXPECT_EQ(out[0], caller[4] * 2.0F + 1.0F);
    }
  }
}

// Device memory the caller owns (what a CUDA IPC handle opens to) is read in place under every
// strategy, managed ones included: the engine never sees the slot's own input buffer.
TEST_P(SessionOnEveryStrategy, CallerDeviceMemoryIsReadInPlace) {
  auto eng = ferry::make_builtin_engine("touch", {.input_bytes = std::size_t{1} << 20});
  ferry::session s(*eng, eng->resolve({}), {.strategy = GetParam(), .inflight = 1}, caps_);
  const std::size_t n = (std::size_t{1} << 20) / sizeof(float);
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<float>(i % 13) + 40.0F;
  void* device_input = nullptr;
  FERRY_CUDA_TRY(cudaMalloc(&device_input, n * sizeof(float)));
  FERRY_CUDA_TRY(cudaMemcpy(device_input, values.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  {
    auto filling = s.acquire();
    std::memset(filling.input(0).data(), 0, filling.input(0).size());  // must not be what is read
    filling.upload_resident_inputs();
    filling.use_caller_input(
        0, std::span<const std::byte>(static_cast<const std::byte*>(device_input), n * sizeof(float)));
    auto done = std::move(filling).submit().wait();
    done.download_resident_outputs();
    const auto* out = reinterpret_cast<const float*>(done.output(0).data());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += out[i] != (static_cast<float>(i % 13) + 40.0F) * 2.0F + 1.0F;
    EXPECT_EQ(wrong, 0U);
  }
  FERRY_CUDA_TRY(cudaFree(device_input));
}

TEST_P(SessionOnEveryStrategy, GraphsGiveTheSameAnswersOrSayWhyNot) {
  auto eng = ferry::make_builtin_engine("touch", {.input_bytes = std::size_t{256} << 10});
  const auto io = eng->resolve({});
  ferry::session s(*eng, io, {.strategy = GetParam(), .inflight = 2, .graph = ferry::graph_mode::on}, caps_);
  if (!s.graph().active) {
    EXPECT_NE(s.graph().reason.find("capture failed"), std::string::npos) << s.graph().reason;
  }
  if (GetParam() == strategy_kind::pinned) EXPECT_TRUE(s.graph().active) << s.graph().reason;
  std::atomic<int> wrong{0};
  run_clients(s, 4, 10, wrong);
  EXPECT_EQ(wrong.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(EveryStrategy, SessionOnEveryStrategy, ::testing::ValuesIn(ferry::all_strategies),
                         strategy_test_name);

TEST(Session, UnknownTensorNamesAreRefusedByName) {
  const auto caps = ferry::query_device(0);
  auto eng = ferry::make_builtin_engine("touch", {.input_bytes = 4096});
  ferry::session s(*eng, eng->resolve({}), {.strategy = strategy_kind::pinned, .inflight = 1}, caps);
  auto filling = s.acquire();
  try {
    (void)filling.input("imput");
    FAIL() << "an unknown input must be refused";
  } catch (const ferry::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'imput'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("input"), std::string::npos) << e.what();
  }
}

TEST(Session, ASlotIsHeldUntilItsLastHandleGoes) {
  const auto caps = ferry::query_device(0);
  auto eng = ferry::make_builtin_engine("touch", {.input_bytes = 4096});
  ferry::session s(*eng, eng->resolve({}), {.strategy = strategy_kind::pinned, .inflight = 1}, caps);
  {
    auto held = s.acquire();
    EXPECT_FALSE(s.try_acquire(std::chrono::milliseconds(20)).has_value());
    auto pending = std::move(held).submit();
    EXPECT_FALSE(s.try_acquire(std::chrono::milliseconds(20)).has_value());
  }  // a pending slot dropped without wait() is waited for, then returned
  EXPECT_TRUE(s.try_acquire(std::chrono::milliseconds(20)).has_value());
}

// The benchmark driver end to end on a small workload: every available strategy runs, checks
// its outputs against the device reference, and reports sane figures.
TEST(BenchCell, EveryStrategyRunsAndMatchesTheReference) {
  const auto caps = ferry::query_device(0);
  const auto w = ferry::bench::make_workload({.engine = "reduce", .input_bytes = 1 << 20});
  ferry::bench::run_options options;
  options.iterations = 40;
  options.check_every = 8;
  for (auto k : ferry::all_strategies) {
    const auto r = ferry::bench::run_cell(w, k, options);
    if (ferry::unavailable_reason(k, caps)) {
      EXPECT_FALSE(r.verdict.measured()) << ferry::to_string(k);
      continue;
    }
    ASSERT_TRUE(r.verdict.measured()) << ferry::to_string(k) << ": " << r.verdict.reason();
    EXPECT_TRUE(r.verdict.output_checked) << ferry::to_string(k);
    EXPECT_TRUE(r.verdict.output_matches) << ferry::to_string(k) << ": " << r.verdict.check_detail;
    EXPECT_EQ(r.figures.iterations, 40U) << ferry::to_string(k);
    EXPECT_GT(r.figures.latency_us.median, 0.0);
    EXPECT_GE(r.figures.latency_us.p99, r.figures.latency_us.median);
    EXPECT_GT(r.figures.throughput_per_s, 0.0);
    EXPECT_EQ(r.identity.input_bytes, std::size_t{1} << 20);
  }
}

TEST(BenchCell, SparseDrawsIndicesInsideTheTable) {
  const auto w = ferry::bench::make_workload({.engine = "sparse:0.05", .input_bytes = 4 << 20});
  ferry::bench::run_options options;
  options.iterations = 20;
  options.check_every = 4;
  const auto r = ferry::bench::run_cell(w, strategy_kind::pinned, options);
  ASSERT_TRUE(r.verdict.measured()) << r.verdict.reason();
  EXPECT_TRUE(r.verdict.output_matches) << r.verdict.check_detail;
}

}  // namespace
