// Sessions whose tensors go by different strategies (session_options::tensor_strategies) on the
// built-in sparse engine: a large f32 "table", a small i32 "indices" input, a small f32 output
// "rows". Every mix, with and without CUDA graphs, with one slot and two, answers exactly what a
// device-strategy session answers for the same inputs (the sparse kernel is deterministic), the
// inputs may be overwritten once wait_inputs_consumed() returns, and the stage times say what the
// header says they mean. Caller memory follows the rule of the tensor's own strategy.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "core/host_registration.hpp"
#include "core/pageable_memory.hpp"
#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/engines/builtin.hpp"
#include "ferry/session/session.hpp"

namespace {

using ferry::graph_mode;
using ferry::strategy_kind;
using ferry::tensor_strategy;
namespace core = ferry::core;

// sparse:0.05 over a 4 MiB table: 1024 pages of 1024 floats, 51 indices, 51 rows.
constexpr std::size_t table_bytes = std::size_t{4} << 20;
constexpr std::int32_t pages = 1024;
constexpr const char* sparse_spec = "sparse:0.05";

using byte_copy = std::vector<std::byte>;

struct request_inputs {
  byte_copy table;
  byte_copy indices;
};

// Different bytes for every seed: table values and the pages each request gathers.
request_inputs make_inputs(const std::vector<ferry::tensor_spec>& io, std::uint32_t seed) {
  request_inputs in{byte_copy(io[0].bytes()), byte_copy(io[1].bytes())};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0F, 1.0F);
  auto* table = reinterpret_cast<float*>(in.table.data());
  for (std::size_t i = 0; i < in.table.size() / sizeof(float); ++i) table[i] = value(rng);
  std::uniform_int_distribution<std::int32_t> page(0, pages - 1);
  auto* indices = reinterpret_cast<std::int32_t*>(in.indices.data());
  for (std::size_t j = 0; j < in.indices.size() / sizeof(std::int32_t); ++j) indices[j] = page(rng);
  return in;
}

void fill(ferry::filling_slot& slot, const request_inputs& in) {
  std::memcpy(slot.input("table").data(), in.table.data(), in.table.size());
  std::memcpy(slot.input("indices").data(), in.indices.data(), in.indices.size());
  slot.upload_resident_inputs();
}

byte_copy rows_of(ferry::completed_slot& done) {
  done.download_resident_outputs();
  const auto rows = done.output("rows");
  return {rows.begin(), rows.end()};
}

// What a device-strategy session answers for `in`: the floor, with nothing but the kernel.
byte_copy reference_rows(ferry::session& reference, const request_inputs& in) {
  auto slot = reference.acquire();
  fill(slot, in);
  auto done = std::move(slot).submit().wait();
  return rows_of(done);
}

struct mix {
  const char* label;
  strategy_kind strategy;  // table, indices and rows unless named below
  std::vector<tensor_strategy> overrides;
};

struct mix_case {
  mix m;
  graph_mode graph;
  int inflight;
};

std::string describe(const mix_case& c) {
  return std::string(c.m.label) + (c.graph == graph_mode::on ? "_graph" : "_stream") + "_inflight" +
         std::to_string(c.inflight);
}
std::string mix_case_name(const ::testing::TestParamInfo<mix_case>& info) { return describe(info.param); }
void PrintTo(const mix_case& c, std::ostream* os) { *os << describe(c); }

const mix mixes[] = {
    {"pinned_table_mapped_indices_managed_advise_rows",
     strategy_kind::pinned,
     {{"indices", strategy_kind::mapped}, {"rows", strategy_kind::managed_advise}}},
    {"managed_prefetch_with_mapped_indices", strategy_kind::managed_prefetch, {{"indices", strategy_kind::mapped}}},
    {"device_with_mapped_indices", strategy_kind::device, {{"indices", strategy_kind::mapped}}},
    {"mapped_with_staged_table_pageable_rows",
     strategy_kind::mapped,
     {{"table", strategy_kind::staged}, {"rows", strategy_kind::pageable}}},
    {"managed_table_pinned_indices_mapped_rows",
     strategy_kind::managed,
     {{"indices", strategy_kind::pinned}, {"rows", strategy_kind::mapped}}},
    {"registered_table_with_device_rows", strategy_kind::registered, {{"rows", strategy_kind::device}}},
};

std::vector<mix_case> every_case() {
  std::vector<mix_case> cases;
  for (const auto& m : mixes)
    for (const auto graph : {graph_mode::off, graph_mode::on})
      for (const int inflight : {1, 2}) cases.push_back({m, graph, inflight});
  return cases;
}

class SessionTensorStrategies : public ::testing::TestWithParam<mix_case> {
 protected:
  void SetUp() override {
    caps_ = ferry::query_device(0);
    const auto& m = GetParam().m;
    for (const auto k : strategies_of(m))
      if (auto reason = ferry::unavailable_reason(k, caps_)) GTEST_SKIP() << ferry::to_string(k) << ": " << *reason;
  }
  static std::vector<strategy_kind> strategies_of(const mix& m) {
    std::vector<strategy_kind> used{m.strategy};
    for (const auto& o : m.overrides) used.push_back(o.strategy);
    return used;
  }
  ferry::device_caps caps_;
};

TEST_P(SessionTensorStrategies, AnswersLikeTheDeviceStrategyForEveryInput) {
  const auto& [m, graph, inflight] = GetParam();
  auto eng = ferry::make_builtin_engine(sparse_spec, {.input_bytes = table_bytes});
  const auto io = eng->resolve({});
  ASSERT_EQ(io[0].name, "table");
  ASSERT_EQ(io[1].name, "indices");
  ASSERT_EQ(io[2].name, "rows");
  ferry::session reference(*eng, io, {.strategy = strategy_kind::device, .inflight = 1}, caps_);
  ferry::session s(*eng, io,
                   {.strategy = m.strategy, .inflight = inflight, .graph = graph, .tensor_strategies = m.overrides},
                   caps_);
  // What the session was asked is what it reports, tensor by tensor.
  EXPECT_EQ(s.options().tensor_strategies, m.overrides);
  for (const auto& t : io) {
    strategy_kind expected = m.strategy;
    for (const auto& o : m.overrides)
      if (o.tensor == t.name) expected = o.strategy;
    EXPECT_EQ(s.strategy_of(t.name), expected) << t.name;
  }
  if (graph == graph_mode::on && !s.graph().active) {
    // Refused visibly, never silently: the reason says why.
    EXPECT_FALSE(s.graph().reason.empty());
  }
  if (graph == graph_mode::on && std::string(m.label) == "pinned_table_mapped_indices_managed_advise_rows") {
    // A DMA, a kernel reading host memory in place and managed pages: all of it captures.
    EXPECT_TRUE(s.graph().active) << s.graph().reason;
  }
  s.warmup(1);

  bool copies = false;
  bool prefetches = false;
  for (const auto& t : io) {
    const auto k = s.strategy_of(t.name);
    copies = copies || ferry::properties(k).path == ferry::data_path::copy;
    prefetches = prefetches || k == strategy_kind::managed_prefetch;
  }

  for (std::uint32_t round = 0; round < 4; ++round) {
    // `inflight` requests in flight at once, each with its own inputs.
    std::vector<request_inputs> inputs;
    std::vector<ferry::pending_slot> pending;
    for (int r = 0; r < inflight; ++r) {
      inputs.push_back(make_inputs(io, 1000 * round + static_cast<std::uint32_t>(r)));
      auto slot = s.acquire();
      fill(slot, inputs.back());
      pending.push_back(std::move(slot).submit());
    }
    std::vector<byte_copy> got;
    for (auto& p : pending) {
      // Once the inputs are consumed, scribbling over the host views must not change the answer.
      p.wait_inputs_consumed();
      auto done = std::move(p).wait();
      got.push_back(rows_of(done));
      const auto t = done.times();
      if (graph == graph_mode::on && s.graph().active) {
        EXPECT_FALSE(t.h2d_ms.has_value());
        EXPECT_FALSE(t.compute_ms.has_value());
      } else {
        // The stages of the whole request (ferry/session/session.hpp): h2d and d2h are there when some
        // tensor copies (h2d also when one is prefetched), else compute is all of it.
        ASSERT_TRUE(t.compute_ms.has_value());
        EXPECT_EQ(t.h2d_ms.has_value(), copies || prefetches) << m.label;
        EXPECT_EQ(t.d2h_ms.has_value(), copies) << m.label;
        EXPECT_GE(t.total_ms + 1e-3F, *t.compute_ms);
        if (!copies && !prefetches) EXPECT_EQ(t.total_ms, *t.compute_ms);
      }
    }
    for (int r = 0; r < inflight; ++r)
      EXPECT_EQ(got[static_cast<std::size_t>(r)], reference_rows(reference, inputs[static_cast<std::size_t>(r)]))
          << m.label << ": round " << round << ", request " << r;
  }
}

// Inputs consumed means the engine no longer needs them: overwrite every input's host view as soon
// as wait_inputs_consumed() returns, and the answer is still the one of the original inputs.
TEST_P(SessionTensorStrategies, InputsMayBeOverwrittenOnceConsumed) {
  const auto& [m, graph, inflight] = GetParam();
  auto eng = ferry::make_builtin_engine(sparse_spec, {.input_bytes = table_bytes});
  const auto io = eng->resolve({});
  ferry::session reference(*eng, io, {.strategy = strategy_kind::device, .inflight = 1}, caps_);
  ferry::session s(*eng, io,
                   {.strategy = m.strategy, .inflight = inflight, .graph = graph, .tensor_strategies = m.overrides},
                   caps_);
  for (std::uint32_t round = 0; round < 3; ++round) {
    const auto in = make_inputs(io, 77 + round);
    auto slot = s.acquire();
    fill(slot, in);
    const auto table = slot.input("table");
    const auto indices = slot.input("indices");
    auto pending = std::move(slot).submit();
    pending.wait_inputs_consumed();
    std::memset(table.data(), 0xFF, table.size());      // NaN everywhere
    std::memset(indices.data(), 0x7F, indices.size());  // pages far outside the table
    auto done = std::move(pending).wait();
    EXPECT_EQ(rows_of(done), reference_rows(reference, in)) << m.label << ": round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(Mixes, SessionTensorStrategies, ::testing::ValuesIn(every_case()), mix_case_name);

TEST(SessionTensorStrategiesRules, AnUnknownTensorIsRefusedByName) {
  const auto caps = ferry::query_device(0);
  auto eng = ferry::make_builtin_engine(sparse_spec, {.input_bytes = table_bytes});
  const auto io = eng->resolve({});
  try {
    ferry::session s(
        *eng, io, {.strategy = strategy_kind::pinned, .tensor_strategies = {{"indexes", strategy_kind::mapped}}}, caps);
    FAIL() << "a tensor the engine does not have was accepted";
  } catch (const ferry::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'indexes'"), std::string::npos) << what;
    EXPECT_NE(what.find("table (input), indices (input), rows (output)"), std::string::npos) << what;
  }
  EXPECT_THROW(
      (void)ferry::session(*eng, io,
                           {.strategy = strategy_kind::pinned,
                            .tensor_strategies = {{"rows", strategy_kind::mapped}, {"rows", strategy_kind::pinned}}},
                           caps),
      ferry::invalid_argument);
  ferry::session s(*eng, io, {.strategy = strategy_kind::pinned, .inflight = 1}, caps);
  EXPECT_EQ(s.strategy_of("indices"), strategy_kind::pinned);
  try {
    (void)s.strategy_of("nope");
    FAIL() << "strategy_of accepted an unknown tensor";
  } catch (const ferry::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos) << e.what();
  }
}

// Registered host memory the caller owns, page-aligned, with room for a misaligned range.
struct registered_bytes {
  explicit registered_bytes(std::size_t n)
      : storage(core::allocate_pageable(n + 4096)),
        registration(core::register_host(std::span(static_cast<std::byte*>(storage.get()), n + 4096),
                                         cudaHostRegisterPortable | cudaHostRegisterMapped)),
        size(n) {}
  [[nodiscard]] std::span<std::byte> at(std::size_t offset) const {
    return {static_cast<std::byte*>(storage.get()) + offset, size};
  }
  core::pageable_memory storage;
  core::host_registration registration;
  std::size_t size;
};

// In a pinned session whose indices are mapped, a caller's registered memory for the indices is
// bound in place (the zero-copy rule: it must be 256-byte aligned), while the table's is copied by
// DMA from any address (the copy rule); a managed-advise input refuses host memory altogether.
TEST(SessionTensorStrategiesRules, CallerMemoryFollowsTheTensorsOwnStrategy) {
  const auto caps = ferry::query_device(0);
  for (const auto k : {strategy_kind::pinned, strategy_kind::mapped, strategy_kind::managed_advise})
    if (auto reason = ferry::unavailable_reason(k, caps)) GTEST_SKIP() << *reason;
  auto eng = ferry::make_builtin_engine(sparse_spec, {.input_bytes = table_bytes});
  const auto io = eng->resolve({});
  ferry::session reference(*eng, io, {.strategy = strategy_kind::device, .inflight = 1}, caps);
  ferry::session s(
      *eng, io,
      {.strategy = strategy_kind::pinned, .inflight = 1, .tensor_strategies = {{"indices", strategy_kind::mapped}}},
      caps);
  const auto in = make_inputs(io, 4242);
  registered_bytes caller_table(in.table.size());
  registered_bytes caller_indices(in.indices.size());
  std::memcpy(caller_table.at(16).data(), in.table.data(), in.table.size());  // misaligned: DMA is fine
  std::memcpy(caller_indices.at(0).data(), in.indices.data(), in.indices.size());
  const auto expected = reference_rows(reference, in);
  {
    auto slot = s.acquire();
    // The slot's own views hold other inputs: only the caller's memory gives the expected answer.
    fill(slot, make_inputs(io, 1));
    EXPECT_FALSE(slot.input_in_place_refusal(0, caller_table.at(16)).has_value());
    EXPECT_FALSE(slot.input_in_place_refusal(1, caller_indices.at(0)).has_value());
    // The mapped input is bound in place, so a misaligned address is refused (by the zero-copy
    // rule); the pinned table is copied by DMA, so the same offset is taken.
    const auto misaligned = slot.input_in_place_refusal(1, std::span(caller_table.at(16).data(), in.indices.size()));
    ASSERT_TRUE(misaligned.has_value());
    EXPECT_NE(misaligned->reason.find("aligned"), std::string::npos) << misaligned->reason;
    slot.use_caller_input(0, caller_table.at(16));
    slot.use_caller_input(1, caller_indices.at(0));
    auto done = std::move(slot).submit().wait();
    EXPECT_EQ(rows_of(done), expected);
  }
  {  // the next request reads the slot's own buffers again
    const auto own = make_inputs(io, 9);
    auto slot = s.acquire();
    fill(slot, own);
    auto done = std::move(slot).submit().wait();
    EXPECT_EQ(rows_of(done), reference_rows(reference, own));
  }
  // A managed input in an otherwise pinned session refuses host caller memory (its engine reads
  // managed pages); the pinned table beside it still takes it.
  ferry::session managed_indices(*eng, io,
                                 {.strategy = strategy_kind::pinned,
                                  .inflight = 1,
                                  .tensor_strategies = {{"indices", strategy_kind::managed_advise}}},
                                 caps);
  auto slot = managed_indices.acquire();
  EXPECT_THROW(slot.use_caller_input(1, caller_indices.at(0)), ferry::unsupported);
  EXPECT_NO_THROW(slot.use_caller_input(0, caller_table.at(16)));
}

}  // namespace
