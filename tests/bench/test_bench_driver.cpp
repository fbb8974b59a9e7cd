// The benchmark driver's CPU-side pieces: sizes and shapes on the command line, fresh inputs,
// output checks, the verdict.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <cstring>
#include <vector>

#include "bench/measure/input_fill.hpp"
#include "bench/measure/output_check.hpp"
#include "bench/statistics/verdict.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/bench/workload_factory.hpp"
#include "ferry/core/byte_size.hpp"
#include "ferry/core/error.hpp"

namespace {

using ferry::parse_byte_size;

// A model config once said "nanKiB" and was served with a tensor of 2^61 elements; "infKiB",
// "1e30" and "17179869188GiB" came back as 0 bytes.
TEST(ByteSize, RefusesWhatIsNotAFiniteAddressableSize) {
  for (const char* text :
       {"nanKiB", "nan", "infKiB", "inf", "-inf", "1e30", "17179869188GiB", "18446744073709551616"}) {
    try {
      (void)parse_byte_size(text);
      ADD_FAILURE() << text << " was taken";
    } catch (const ferry::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(parse_byte_size("17179869183GiB"), std::size_t{17179869183} << 30);  // just below 2^64
}

TEST(ByteSize, UnitsFollowTheirStandards) {
  EXPECT_EQ(parse_byte_size("4096"), 4096U);
  EXPECT_EQ(parse_byte_size("0.6MB"), 600000U);
  EXPECT_EQ(parse_byte_size("19MB"), 19000000U);
  EXPECT_EQ(parse_byte_size("64MiB"), 64U << 20);
  EXPECT_EQ(parse_byte_size("2KiB"), 2048U);
  EXPECT_THROW((void)parse_byte_size("MB"), ferry::invalid_argument);
  EXPECT_THROW((void)parse_byte_size("-1MB"), ferry::invalid_argument);
  EXPECT_THROW((void)parse_byte_size("3 parsecs"), ferry::invalid_argument);
}

// One way of writing sizes, decimal as --size reads "MB": what a user types comes back as typed.
TEST(ByteSize, WrittenInTheUnitsItIsRead) {
  using ferry::format_byte_size;
  EXPECT_EQ(format_byte_size(512), "512 B");
  EXPECT_EQ(format_byte_size(600000), "600 KB");
  EXPECT_EQ(format_byte_size(19000000), "19 MB");
  EXPECT_EQ(format_byte_size(19U << 20), "19.9 MB");
  EXPECT_EQ(format_byte_size(4U << 20), "4.19 MB");
  EXPECT_EQ(format_byte_size(65536), "65.5 KB");
  EXPECT_EQ(format_byte_size(999700), "1 MB");
  EXPECT_EQ(format_byte_size(std::size_t{256} << 20), "268 MB");
  EXPECT_EQ(format_byte_size(std::size_t{141} * 1000 * 1000 * 1000), "141 GB");
  for (const char* typed : {"600KB", "19MB", "64MB", "1.5GB"}) {
    std::string written = format_byte_size(parse_byte_size(typed));
    written.erase(std::remove(written.begin(), written.end(), ' '), written.end());  // "19 MB" -> "19MB"
    EXPECT_EQ(written, typed);
  }
}

TEST(Shapes, ParseNameAndDims) {
  const auto b = ferry::bench::parse_shape("input:16x3x224x224");
  EXPECT_EQ(b.name, "input");
  EXPECT_EQ(b.dims, (std::vector<std::int64_t>{16, 3, 224, 224}));
  EXPECT_THROW((void)ferry::bench::parse_shape("input"), ferry::invalid_argument);
  EXPECT_THROW((void)ferry::bench::parse_shape("input:16x0"), ferry::invalid_argument);
  EXPECT_THROW((void)ferry::bench::parse_shape("input:16xx3"), ferry::invalid_argument);
}

TEST(Workloads, UnknownEnginesAndStagesAreNamed) {
  try {
    (void)ferry::bench::make_workload({.engine = "resnet"});
    FAIL();
  } catch (const ferry::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("resnet"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)ferry::bench::make_workload({.engine = "trt:model.plan"}), ferry::unsupported);
  EXPECT_THROW((void)ferry::bench::make_workload({.engine = "reduce", .preprocess = "jpeg"}), ferry::invalid_argument);
  const auto w = ferry::bench::make_workload({.engine = "reduce", .preprocess = "u8-normalize"});
  EXPECT_EQ(w.label, "u8-normalize+reduce");
  auto eng = w.make_engine(0);
  const auto io = eng->resolve({});
  ASSERT_FALSE(io.empty());
  EXPECT_EQ(io.front().type, ferry::dtype::u8);  // images cross the bus as bytes
}

TEST(InputFill, FloatsAreFiniteAndFreshPerSeed) {
  ferry::tensor_spec spec{.name = "x", .type = ferry::dtype::f32, .shape = {1001}};
  std::vector<std::byte> a(spec.bytes()), b(spec.bytes());
  ferry::bench::fill_fresh(a, spec, 1, ferry::bench::input_writes::cached, ferry::input_data{});
  ferry::bench::fill_fresh(b, spec, 2, ferry::bench::input_writes::cached, ferry::input_data{});
  EXPECT_NE(a, b);
  for (std::size_t i = 0; i < 1001; ++i) {
    float v;
    std::memcpy(&v, a.data() + 4 * i, 4);
    ASSERT_TRUE(std::isfinite(v));
    ASSERT_GE(v, -1.0F);
    ASSERT_LT(v, 1.0F);
  }
}

TEST(InputFill, IndicesStayInsideTheBound) {
  ferry::tensor_spec spec{.name = "indices", .type = ferry::dtype::i32, .shape = {4096}, .index_bound = 37};
  std::vector<std::byte> host(spec.bytes());
  ferry::bench::fill_fresh(host, spec, 9, ferry::bench::input_writes::cached, ferry::input_data{});
  std::vector<int> seen(37, 0);
  for (std::size_t i = 0; i < 4096; ++i) {
    std::int32_t v;
    std::memcpy(&v, host.data() + 4 * i, 4);
    ASSERT_GE(v, 0);
    ASSERT_LT(v, 37);
    seen[v] = 1;
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 37);  // spread over the whole range
}

// Streaming writes change how the bytes reach memory, never which bytes: the same seed gives the
// same input for every dtype, at sizes that split elements and the 64 KiB scratch chunks.
TEST(InputFill, StreamingWritesTheSameBytesAsCached) {
  using ferry::dtype;
  std::vector<ferry::tensor_spec> specs;
  for (const dtype type :
       {dtype::f32, dtype::f16, dtype::bf16, dtype::u8, dtype::i8, dtype::i32, dtype::i64, dtype::boolean})
    specs.push_back({.name = "x", .type = type, .shape = {1}});
  specs.push_back({.name = "indices", .type = dtype::i32, .shape = {1}, .index_bound = 1000});
  specs.push_back({.name = "indices", .type = dtype::i64, .shape = {1}, .index_bound = 1000});
  constexpr std::size_t chunk = 64 * 1024;
  for (const auto& spec : specs) {
    for (const std::size_t bytes :
         {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{4098}, chunk, 3 * chunk + 7, 3 * chunk + 8}) {
      // Different starting bytes, so a byte either mode leaves unwritten shows (bar a coincidence).
      std::vector<std::byte> cached(bytes, std::byte{0x00}), streamed(bytes, std::byte{0xA5});
      ferry::bench::fill_fresh(cached, spec, 77, ferry::bench::input_writes::cached, ferry::input_data{});
      ferry::bench::fill_fresh(streamed, spec, 77, ferry::bench::input_writes::streaming, ferry::input_data{});
      ASSERT_EQ(cached, streamed) << ferry::to_string(spec.type) << (spec.index_bound ? " with a bound, " : ", ")
                                  << bytes << " bytes";
    }
  }
}

TEST(OutputCheck, FindsTheFirstMismatchAndAcceptsRounding) {
  ferry::tensor_spec spec{.name = "sums", .type = ferry::dtype::f32, .shape = {3}};
  std::vector<float> ref{1.0F, 2.0F, std::nanf("")};
  std::vector<float> got{1.0F + 1e-7F, 2.0F, std::nanf("")};
  auto as_bytes = [](const std::vector<float>& v) { return std::as_bytes(std::span(v)); };
  EXPECT_TRUE(ferry::bench::compare_output(as_bytes(got), as_bytes(ref), spec).matches);
  got[1] = 2.5F;
  const auto outcome = ferry::bench::compare_output(as_bytes(got), as_bytes(ref), spec);
  EXPECT_FALSE(outcome.matches);
  EXPECT_NE(outcome.first_mismatch.find("'sums'[1]"), std::string::npos) << outcome.first_mismatch;
}

ferry::bench::strategy_result cell(const std::string& strategy, double latency, double throughput) {
  ferry::bench::strategy_result r;
  r.identity.strategy = ferry::parse_strategy(strategy);
  r.identity.engine = "reduce";
  r.identity.input_bytes = 600000;
  r.figures.iterations = 100;
  r.figures.latency_us.median = latency;
  r.figures.throughput_per_s = throughput;
  r.verdict.output_checked = r.verdict.output_matches = true;
  return r;
}

TEST(Verdict, PicksTheBestHostStrategyNeverTheFloor) {
  ferry::bench::bench_report report;
  report.results = {cell("device", 10, 9000), cell("pinned", 50, 4000), cell("mapped", 45, 3000),
                    cell("managed", 355, 500)};
  auto refused = cell("system", 1, 1);
  refused.verdict.refuse("pageableMemoryAccess=0");
  report.results.push_back(refused);
  auto wrong = cell("staged", 5, 1);
  wrong.verdict.output_matches = false;  // fast but wrong never wins
  report.results.push_back(wrong);

  const auto latency = ferry::bench::decide_winner(report.results, ferry::objective::latency, "advice.");
  EXPECT_EQ(latency.winner, "mapped");
  EXPECT_NE(latency.recommendation.find("For latency"), std::string::npos) << latency.recommendation;
  EXPECT_NE(latency.recommendation.find("device floor"), std::string::npos) << latency.recommendation;
  EXPECT_NE(latency.recommendation.find("managed"), std::string::npos) << latency.recommendation;
  EXPECT_EQ(ferry::bench::decide_winner(report.results, ferry::objective::throughput, "advice.").winner, "pinned");
}

}  // namespace
