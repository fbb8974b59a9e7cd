// The GPU side of the index checks (ferry/session/index_check.hpp): under every strategy, an index input's
// value out of range never reaches the engine and fails its request with the value and position,
// whether the CPU wrote it or it sits in caller device memory (which is left as the caller wrote
// it); the next request answers right; a graph-captured slot checks too; with the checks off the
// engine sees the value (sparse answers NaN for it).
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/device_memory.hpp"
#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/engines/builtin.hpp"
#include "ferry/session/index_check.hpp"
#include "ferry/session/session.hpp"
#include "support/strategy_test_name.hpp"

namespace {

using ferry::strategy_kind;

constexpr std::size_t table_bytes = std::size_t{1} << 20;  // 256 pages of 1024 floats

class IndexGuard : public ::testing::TestWithParam<strategy_kind> {
 protected:
  void SetUp() override {
    caps_ = ferry::query_device(0);
    if (auto reason = ferry::unavailable_reason(GetParam(), caps_)) GTEST_SKIP() << *reason;
    engine_ = ferry::make_builtin_engine("sparse:0.5", {.input_bytes = table_bytes});
    io_ = engine_->resolve({});
  }
  std::unique_ptr<ferry::session> make(ferry::session_options options) {
    options.strategy = GetParam();
    return std::make_unique<ferry::session>(*engine_, io_, options, caps_);
  }
  // Fills the table with 1s and the indices with `indices`; returns the rows or throws.
  static std::vector<float> run(ferry::session& s, const std::vector<std::int32_t>& indices) {
    auto f = s.acquire();
    auto table = f.input("table");
    std::vector<float> ones(table.size() / sizeof(float), 1.0F);
    std::memcpy(table.data(), ones.data(), table.size());
    std::memcpy(f.input("indices").data(), indices.data(), indices.size() * sizeof(std::int32_t));
    f.upload_resident_inputs();
    auto done = std::move(f).submit().wait();
    done.download_resident_outputs();
    const auto out = done.output("rows");
    std::vector<float> rows(out.size() / sizeof(float));
    std::memcpy(rows.data(), out.data(), out.size());
    return rows;
  }
  [[nodiscard]] std::size_t rows() const { return static_cast<std::size_t>(io_[1].shape[0]); }
  [[nodiscard]] std::int64_t pages() const { return *io_[1].index_bound; }

  ferry::device_caps caps_;
  std::unique_ptr<ferry::engine> engine_;
  std::vector<ferry::tensor_spec> io_;
};

TEST_P(IndexGuard, AValueOutOfRangeFailsItsRequestAndTheNextIsRight) {
  auto s = make({.inflight = 2});
  std::vector<std::int32_t> indices(rows(), 3);
  indices[5] = static_cast<std::int32_t>(pages()) + 7;
  indices[9] = -4;
  try {
    (void)run(*s, indices);
    FAIL() << "no index_out_of_range";
  } catch (const ferry::index_out_of_range& e) {
    EXPECT_EQ(e.violation().value, pages() + 7);
    EXPECT_EQ(e.violation().position, (std::vector<std::int64_t>{5}));
    EXPECT_EQ(e.violation().count, 2U);
    EXPECT_EQ(e.violation().bound, pages());
  }
  indices[5] = indices[9] = 0;
  for (const float v : run(*s, indices)) EXPECT_EQ(v, 1024.0F);  // a page of ones
}

TEST_P(IndexGuard, CallerDeviceMemoryIsCheckedAndLeftAsTheCallerWroteIt) {
  auto s = make({.inflight = 1});
  std::vector<std::int32_t> indices(rows(), 1);
  indices.back() = static_cast<std::int32_t>(pages());
  auto memory = ferry::core::allocate_device(indices.size() * sizeof(std::int32_t));
  FERRY_CUDA_TRY(cudaMemcpy(memory.get(), indices.data(), indices.size() * 4, cudaMemcpyHostToDevice));
  auto f = s->acquire();
  std::vector<float> ones(f.input("table").size() / sizeof(float), 1.0F);
  std::memcpy(f.input("table").data(), ones.data(), f.input("table").size());
  f.upload_resident_inputs();
  f.use_caller_input(1, {static_cast<const std::byte*>(memory.get()), indices.size() * 4});
  try {
    (void)std::move(f).submit().wait();
    FAIL() << "no index_out_of_range";
  } catch (const ferry::index_out_of_range& e) {
    EXPECT_EQ(e.violation().position, (std::vector<std::int64_t>{static_cast<std::int64_t>(rows()) - 1}));
  }
  std::vector<std::int32_t> after(indices.size());
  FERRY_CUDA_TRY(cudaMemcpy(after.data(), memory.get(), after.size() * 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(after, indices);
}

TEST_P(IndexGuard, AGraphCapturedSlotChecksToo) {
  auto s = make({.inflight = 1, .graph = ferry::graph_mode::on});
  if (!s->graph().active) GTEST_SKIP() << s->graph().reason;
  std::vector<std::int32_t> indices(rows(), 2);
  for (int round = 0; round < 3; ++round) {
    indices[round] = static_cast<std::int32_t>(pages()) * 3;
    EXPECT_THROW((void)run(*s, indices), ferry::index_out_of_range);
    indices[round] = 2;
    for (const float v : run(*s, indices)) ASSERT_EQ(v, 1024.0F);
  }
}

TEST_P(IndexGuard, WithTheChecksOffTheEngineSeesTheValue) {
  auto s = make({.inflight = 1, .index_checks = ferry::index_check::off});
  std::vector<std::int32_t> indices(rows(), 0);
  indices[0] = static_cast<std::int32_t>(pages());
  const auto out = run(*s, indices);
  EXPECT_TRUE(std::isnan(out[0]));  // sparse's own check: NaN for an index it cannot read
  EXPECT_EQ(out[1], 1024.0F);
}

INSTANTIATE_TEST_SUITE_P(EveryStrategy, IndexGuard, ::testing::ValuesIn(ferry::all_strategies), strategy_test_name);

}  // namespace
