// Built-in workloads without a GPU: spec parsing, declared and resolved I/O, shape errors, and the
// CPU references on inputs small enough to check by hand.
#include <gtest/gtest.h>

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "engines/builtin/mlp_weights.hpp"
#include "ferry/core/error.hpp"
#include "ferry/engines/builtin.hpp"

namespace {

using ferry::builtin_options;
using ferry::dtype;
using ferry::dynamic_dim;
using ferry::host_reference_engine;
using ferry::invalid_argument;
using ferry::shape_binding;
using ferry::tensor_role;
using ferry::tensor_spec;

// Runs `call`, expects invalid_argument, and returns its message.
std::string invalid_argument_message(const std::function<void()>& call) {
  try {
    call();
  } catch (const invalid_argument& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception";
}

#define EXPECT_MESSAGE_HAS(message, part) EXPECT_NE((message).find(part), std::string::npos) << (message)

builtin_options bytes(std::size_t input_bytes, std::int64_t batch = 16) {
  builtin_options options;
  options.input_bytes = input_bytes;
  options.batch = batch;
  return options;
}

template <typename T>
std::span<const std::byte> in_bytes(const std::vector<T>& v) {
  return std::as_bytes(std::span<const T>(v));
}
template <typename T>
std::span<std::byte> out_bytes(std::vector<T>& v) {
  return std::as_writable_bytes(std::span<T>(v));
}

// run_on_host with one input and one output.
template <typename In, typename Out>
void run_one(const host_reference_engine& engine, const std::vector<In>& in, std::vector<Out>& out) {
  const std::span<const std::byte> inputs[] = {in_bytes(in)};
  const std::span<std::byte> outputs[] = {out_bytes(out)};
  engine.run_on_host(inputs, outputs);
}

// ---- spec parsing ----------------------------------------------------------------------------

TEST(BuiltinSpec, GoodSpecsMakeEnginesNamedAfterThem) {
  for (const char* spec : {"touch", "reduce", "reduce:4", "sparse:0.1", "sparse:1", "mlp:2x8"}) {
    const auto engine = ferry::make_builtin_engine(spec, bytes(64 * 4096));
    ASSERT_NE(engine, nullptr) << spec;
    EXPECT_EQ(engine->name(), spec);
  }
}

TEST(BuiltinSpec, BadSpecsSayWhatIsWrong) {
  const auto message = [](const char* spec) {
    return invalid_argument_message([&] { (void)ferry::make_builtin_engine(spec, bytes(4096)); });
  };
  const std::string zero_layers = message("mlp:0x10");
  EXPECT_MESSAGE_HAS(zero_layers, "mlp:0x10");
  EXPECT_MESSAGE_HAS(zero_layers, "layers");
  EXPECT_MESSAGE_HAS(message("mlp:2x0"), "width");
  EXPECT_MESSAGE_HAS(message("mlp:4"), "<layers>x<width>");
  EXPECT_MESSAGE_HAS(message("mlp:ax4"), "<layers>x<width>");
  EXPECT_MESSAGE_HAS(message("mlp"), "<layers>x<width>");
  EXPECT_MESSAGE_HAS(message("sparse:0"), "(0, 1]");
  EXPECT_MESSAGE_HAS(message("sparse:1.5"), "(0, 1]");
  EXPECT_MESSAGE_HAS(message("sparse:-0.5"), "(0, 1]");
  EXPECT_MESSAGE_HAS(message("sparse:nan"), "(0, 1]");
  EXPECT_MESSAGE_HAS(message("sparse:abc"), "not a number");
  EXPECT_MESSAGE_HAS(message("sparse:0.5x"), "not a number");
  EXPECT_MESSAGE_HAS(message("sparse"), "fraction");
  EXPECT_MESSAGE_HAS(message("touch:3"), "takes no parameter");
  EXPECT_MESSAGE_HAS(message("reduce:0"), "passes");
  EXPECT_MESSAGE_HAS(message("reduce:65"), "[1, 64]");
  EXPECT_MESSAGE_HAS(message("reduce:2x"), "passes");
  const std::string unknown = message("nope");
  EXPECT_MESSAGE_HAS(unknown, "'nope'");
  EXPECT_MESSAGE_HAS(unknown, "unknown workload");
  EXPECT_MESSAGE_HAS(unknown, "mlp:<layers>x<width>");
  EXPECT_MESSAGE_HAS(unknown, "or a model file BACKEND:PATH (torch:model.pt2");  // the other kind of engine
  EXPECT_MESSAGE_HAS(message(""), "unknown workload");
}

TEST(BuiltinSpec, BadOptionsAreRefused) {
  EXPECT_MESSAGE_HAS(invalid_argument_message([] { (void)ferry::make_builtin_engine("touch", bytes(3)); }),
                     "input_bytes");
  EXPECT_MESSAGE_HAS(invalid_argument_message([] { (void)ferry::make_builtin_engine("sparse:0.5", bytes(4095)); }),
                     "input_bytes >= 4096");
  EXPECT_MESSAGE_HAS(invalid_argument_message([] { (void)ferry::make_builtin_engine("mlp:1x8", bytes(4096, 0)); }),
                     "batch");
}

// ---- declared and resolved I/O ---------------------------------------------------------------

void expect_tensor(const tensor_spec& t, const char* name, dtype type, std::vector<std::int64_t> shape,
                   tensor_role role) {
  EXPECT_EQ(t.name, name);
  EXPECT_EQ(t.type, type) << name;
  EXPECT_EQ(t.shape, shape) << name;
  EXPECT_EQ(t.role, role) << name;
}

TEST(BuiltinIo, TouchAndReduceTakeTheirSizeFromInputBytes) {
  const auto touch = ferry::make_builtin_engine("touch", bytes(4096));
  ASSERT_EQ(touch->io().size(), 2U);
  expect_tensor(touch->io()[0], "input", dtype::f32, {1024}, tensor_role::input);
  expect_tensor(touch->io()[1], "output", dtype::f32, {1024}, tensor_role::output);

  const auto reduce = ferry::make_builtin_engine("reduce", bytes(8000));
  ASSERT_EQ(reduce->io().size(), 2U);
  expect_tensor(reduce->io()[0], "input", dtype::f32, {2000}, tensor_role::input);
  expect_tensor(reduce->io()[1], "sums", dtype::f32, {1000}, tensor_role::output);
  const auto resolved = reduce->resolve({});
  ASSERT_EQ(resolved.size(), 2U);
  EXPECT_EQ(resolved[0].shape, reduce->io()[0].shape);
  EXPECT_EQ(resolved[1].shape, reduce->io()[1].shape);
}

TEST(BuiltinIo, SparseLooksUpARoundedShareOfWholePages) {
  // 10 whole pages plus a partial one that is never read.
  const auto sparse = ferry::make_builtin_engine("sparse:0.34", bytes(10 * 4096 + 100));
  ASSERT_EQ(sparse->io().size(), 3U);
  expect_tensor(sparse->io()[0], "table", dtype::f32, {(10 * 4096 + 100) / 4}, tensor_role::input);
  expect_tensor(sparse->io()[1], "indices", dtype::i32, {3}, tensor_role::input);
  expect_tensor(sparse->io()[2], "rows", dtype::f32, {3}, tensor_role::output);
  EXPECT_EQ(sparse->io()[1].index_bound, std::optional<std::int64_t>(10));
  EXPECT_FALSE(sparse->io()[0].index_bound.has_value());

  // A tiny share still looks up one page.
  const auto one = ferry::make_builtin_engine("sparse:0.0001", bytes(10 * 4096));
  EXPECT_EQ(one->io()[1].shape, std::vector<std::int64_t>{1});
}

TEST(BuiltinIo, MlpBatchIsDynamic) {
  const auto mlp = ferry::make_builtin_engine("mlp:3x8", bytes(4096, 5));
  ASSERT_EQ(mlp->io().size(), 2U);
  expect_tensor(mlp->io()[0], "input", dtype::f16, {dynamic_dim, 8}, tensor_role::input);
  expect_tensor(mlp->io()[1], "output", dtype::f16, {dynamic_dim, 8}, tensor_role::output);

  const auto by_default = mlp->resolve({});
  expect_tensor(by_default[0], "input", dtype::f16, {5, 8}, tensor_role::input);
  expect_tensor(by_default[1], "output", dtype::f16, {5, 8}, tensor_role::output);

  const shape_binding batch_of_two[] = {{"input", {2, 8}}};
  const auto bound = mlp->resolve(batch_of_two);
  expect_tensor(bound[0], "input", dtype::f16, {2, 8}, tensor_role::input);
  expect_tensor(bound[1], "output", dtype::f16, {2, 8}, tensor_role::output);
  EXPECT_DOUBLE_EQ(mlp->flops_per_request(bound), 2.0 * 2 * 8 * 8 * 3);
}

TEST(BuiltinIo, ResolveNamesTheTensorOnBadShapes) {
  const auto touch = ferry::make_builtin_engine("touch", bytes(4096));
  const auto resolve_message = [&](const ferry::engine& engine, shape_binding binding) {
    return invalid_argument_message([&] {
      const shape_binding bindings[] = {std::move(binding)};
      (void)engine.resolve(bindings);
    });
  };
  const std::string unknown = resolve_message(*touch, {"nope", {1024}});
  EXPECT_MESSAGE_HAS(unknown, "'nope'");
  EXPECT_MESSAGE_HAS(unknown, "'input'");  // lists the valid inputs
  EXPECT_MESSAGE_HAS(resolve_message(*touch, {"output", {1024}}), "no input named 'output'");
  const std::string rank = resolve_message(*touch, {"input", {1024, 1}});
  EXPECT_MESSAGE_HAS(rank, "'input'");
  EXPECT_MESSAGE_HAS(rank, "rank 1");
  const std::string size = resolve_message(*touch, {"input", {1023}});
  EXPECT_MESSAGE_HAS(size, "'input'");
  EXPECT_MESSAGE_HAS(size, "[1024]");
  EXPECT_MESSAGE_HAS(size, "[1023]");
  const shape_binding same_shape[] = {{"input", {1024}}};
  EXPECT_EQ(touch->resolve(same_shape)[0].shape, std::vector<std::int64_t>{1024});

  const auto mlp = ferry::make_builtin_engine("mlp:1x8", bytes(4096));
  EXPECT_MESSAGE_HAS(resolve_message(*mlp, {"input", {4, 9}}), "[?, 8]");
  EXPECT_MESSAGE_HAS(resolve_message(*mlp, {"input", {0, 8}}), "positive");
  EXPECT_MESSAGE_HAS(resolve_message(*mlp, {"input", {-1, 8}}), "positive");

  const auto sparse = ferry::make_builtin_engine("sparse:1", bytes(4 * 4096));
  EXPECT_MESSAGE_HAS(resolve_message(*sparse, {"indices", {5}}), "'indices'");
  const shape_binding twice[] = {{"table", {4096}}, {"table", {4096}}};
  EXPECT_MESSAGE_HAS(invalid_argument_message([&] { (void)sparse->resolve(twice); }), "twice");
}

// ---- CPU references --------------------------------------------------------------------------

TEST(BuiltinHost, TouchDoublesAndAddsOne) {
  const auto touch = ferry::make_builtin_engine("touch", bytes(5 * 4));
  const std::vector<float> in = {0.0F, 1.0F, -2.5F, 3.0F, 1e30F};
  std::vector<float> out(5);
  run_one(*touch, in, out);
  EXPECT_EQ(out, (std::vector<float>{1.0F, 3.0F, -4.0F, 7.0F, 2e30F}));
}

TEST(BuiltinHost, ReduceSumsContiguousChunks) {
  // 2000 elements: bucket b holds elements 2b and 2b + 1.
  const auto reduce = ferry::make_builtin_engine("reduce", bytes(2000 * 4));
  std::vector<float> in(2000);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  std::vector<float> sums(1000);
  run_one(*reduce, in, sums);
  for (std::size_t b = 0; b < sums.size(); ++b) ASSERT_EQ(sums[b], static_cast<float>(4 * b + 1)) << "bucket " << b;

  // Fewer elements than buckets: each element lands in exactly one bucket, the rest are 0.
  const auto small = ferry::make_builtin_engine("reduce", bytes(3 * 4));
  const std::vector<float> three = {1.0F, 10.0F, 100.0F};
  run_one(*small, three, sums);
  float total = 0.0F;
  for (float s : sums) total += s;
  EXPECT_EQ(total, 111.0F);
  EXPECT_EQ(sums[333], 1.0F);    // [333*3/1000, 334*3/1000) = [0, 1)
  EXPECT_EQ(sums[666], 10.0F);   // [1, 2)
  EXPECT_EQ(sums[999], 100.0F);  // [2, 3)
}

TEST(BuiltinHost, SparseSumsPagesAndMarksBadIndicesNaN) {
  const auto sparse = ferry::make_builtin_engine("sparse:1", bytes(4 * 4096));
  ASSERT_EQ(sparse->io()[1].shape, std::vector<std::int64_t>{4});
  std::vector<float> table(4 * 1024);
  for (std::size_t i = 0; i < table.size(); ++i)
    table[i] = static_cast<float>(i / 1024) + 0.5F;  // page p holds p + 0.5 everywhere
  const std::vector<std::int32_t> indices = {2, 0, 4, -1};
  std::vector<float> rows(4);
  const std::span<const std::byte> inputs[] = {in_bytes(table), in_bytes(indices)};
  const std::span<std::byte> outputs[] = {out_bytes(rows)};
  sparse->run_on_host(inputs, outputs);
  EXPECT_EQ(rows[0], 1024.0F * 2.5F);
  EXPECT_EQ(rows[1], 1024.0F * 0.5F);
  EXPECT_TRUE(std::isnan(rows[2])) << "index == pages is out of range";
  EXPECT_TRUE(std::isnan(rows[3])) << "negative index";
}

TEST(BuiltinHost, RunOnHostRefusesWrongSpans) {
  const auto touch = ferry::make_builtin_engine("touch", bytes(16));
  std::vector<float> in(4);
  std::vector<float> short_out(3);
  EXPECT_MESSAGE_HAS(invalid_argument_message([&] { run_one(*touch, in, short_out); }), "'output'");
  const std::span<const std::byte> no_inputs[1] = {};
  std::vector<float> out(4);
  const std::span<std::byte> outputs[] = {out_bytes(out)};
  EXPECT_MESSAGE_HAS(invalid_argument_message([&] { touch->run_on_host(std::span(no_inputs, 0), outputs); }), "spans");
}

TEST(BuiltinHost, MlpWeightsAreDeterministicAndScaled) {
  const auto a = ferry::builtin::make_mlp_weights(2, 64);
  const auto b = ferry::builtin::make_mlp_weights(2, 64);
  ASSERT_EQ(a.size(), 2U * 64 * 64);
  const float bound = std::sqrt(6.0F / 64.0F) * 1.001F;
  double sum_squares = 0.0;
  bool layers_differ = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(__half2float(a[i]), __half2float(b[i]));
    ASSERT_LE(std::fabs(__half2float(a[i])), bound);
    sum_squares += static_cast<double>(__half2float(a[i])) * __half2float(a[i]);
    if (i < 64 * 64) layers_differ = layers_differ || __half2float(a[i]) != __half2float(a[i + 64 * 64]);
  }
  EXPECT_TRUE(layers_differ);
  // Uniform on [-a, a] has variance a^2 / 3 = 2 / width.
  EXPECT_NEAR(sum_squares / static_cast<double>(a.size()), 2.0 / 64.0, 0.2 * 2.0 / 64.0);
}

TEST(BuiltinHost, MlpMatchesANaiveLoop) {
  constexpr int layers = 2;
  constexpr int width = 6;
  constexpr int batch = 3;
  const auto mlp = ferry::make_builtin_engine("mlp:2x6", bytes(4096, batch));
  const auto weights = ferry::builtin::make_mlp_weights(layers, width);

  std::vector<__half> in(batch * width);
  for (std::size_t i = 0; i < in.size(); ++i)
    in[i] = __float2half(static_cast<float>(static_cast<int>(i % 7) - 3) * 0.25F);
  std::vector<__half> out(in.size());
  run_one(*mlp, in, out);

  // y[b][j] = relu(sum_i x[b][i] * W[i][j]), fp32 sums, fp16 between layers.
  std::vector<float> x(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) x[i] = __half2float(in[i]);
  for (int layer = 0; layer < layers; ++layer) {
    std::vector<float> y(x.size());
    for (int b = 0; b < batch; ++b) {
      for (int j = 0; j < width; ++j) {
        float acc = 0.0F;
        for (int i = 0; i < width; ++i)
          acc += x[b * width + i] * __half2float(weights[layer * width * width + i * width + j]);
        y[b * width + j] = std::max(0.0F, __half2float(__float2half(acc)));
      }
    }
    x = y;
  }
  bool any_positive = false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_NEAR(__half2float(out[i]), x[i], 1e-3F * (1.0F + std::fabs(x[i]))) << "element " << i;
    any_positive = any_positive || x[i] > 0.0F;
  }
  EXPECT_TRUE(any_positive) << "a test whose outputs are all zero checks nothing";

  std::vector<__half> wrong(7);
  EXPECT_MESSAGE_HAS(invalid_argument_message([&] { run_one(*mlp, wrong, out); }), "row");
}

// ---- u8-normalize ----------------------------------------------------------------------------

ferry::normalize_options tiny_images() {
  ferry::normalize_options options;
  options.height = 2;
  options.width = 2;
  return options;
}

// (v / 255 - mean[c]) / stddev[c], written the obvious way.
float normalized(std::uint8_t v, int c) {
  const ferry::normalize_options o;
  return (static_cast<float>(v) / 255.0F - o.mean[c]) / o.stddev[c];
}

TEST(BuiltinNormalize, OneTwoByTwoImageMatchesHandComputation) {
  // touch over 12 floats = one 3x2x2 image; its output is 2 * normalized + 1, in CHW order.
  auto engine = ferry::with_u8_normalize(ferry::make_builtin_engine("touch", bytes(12 * 4)), tiny_images());
  EXPECT_EQ(engine->name(), "u8-normalize+touch");
  ASSERT_EQ(engine->io().size(), 2U);
  expect_tensor(engine->io()[0], "input", dtype::u8, {1, 2, 2, 3}, tensor_role::input);
  expect_tensor(engine->io()[1], "output", dtype::f32, {12}, tensor_role::output);
  const shape_binding image[] = {{"input", {1, 2, 2, 3}}};
  EXPECT_EQ(engine->resolve(image)[0].shape, (std::vector<std::int64_t>{1, 2, 2, 3}));

  // HWC: pixel (y, x) holds R, G, B.
  const std::vector<std::uint8_t> hwc = {0, 128, 255, 10, 20, 30, 255, 0, 1, 77, 200, 133};
  std::vector<float> out(12);
  run_one(*engine, hwc, out);
  for (int c = 0; c < 3; ++c) {
    for (int pixel = 0; pixel < 4; ++pixel) {
      const float expected = 2.0F * normalized(hwc[pixel * 3 + c], c) + 1.0F;
      EXPECT_NEAR(out[c * 4 + pixel], expected, 1e-5F * (1.0F + std::fabs(expected)))
          << "channel " << c << " pixel " << pixel;
    }
  }
}

TEST(BuiltinNormalize, FeedsFp16BatchMajorInputsAndKeepsOtherTensors) {
  // mlp:1x12 takes [batch, 12] f16 = [batch, 3*2*2]: the batch stays dynamic.
  std::unique_ptr<host_reference_engine> mlp = ferry::make_builtin_engine("mlp:1x12", bytes(4096, 2));
  const host_reference_engine* inner = mlp.get();
  auto engine = ferry::with_u8_normalize(std::move(mlp), tiny_images());
  expect_tensor(engine->io()[0], "input", dtype::u8, {dynamic_dim, 2, 2, 3}, tensor_role::input);
  expect_tensor(engine->resolve({})[0], "input", dtype::u8, {2, 2, 2, 3}, tensor_role::input);
  const shape_binding three[] = {{"input", {3, 2, 2, 3}}};
  const auto concrete = engine->resolve(three);
  expect_tensor(concrete[1], "output", dtype::f16, {3, 12}, tensor_role::output);
  EXPECT_GT(engine->flops_per_request(concrete), 2.0 * 3 * 12 * 12);

  std::vector<std::uint8_t> hwc(3 * 12);
  for (std::size_t i = 0; i < hwc.size(); ++i) hwc[i] = static_cast<std::uint8_t>(i * 37 % 256);
  std::vector<__half> out(3 * 12);
  run_one(*engine, hwc, out);

  // The same through the inner engine on hand-normalised f16 CHW input.
  std::vector<__half> chw(3 * 12);
  for (int b = 0; b < 3; ++b)
    for (int p = 0; p < 4; ++p)
      for (int c = 0; c < 3; ++c) chw[b * 12 + c * 4 + p] = __float2half(normalized(hwc[(b * 4 + p) * 3 + c], c));
  std::vector<__half> expected(3 * 12);
  run_one(*inner, chw, expected);
  for (std::size_t i = 0; i < out.size(); ++i)
    EXPECT_NEAR(__half2float(out[i]), __half2float(expected[i]), 2e-2F * (1.0F + std::fabs(__half2float(expected[i]))))
        << "element " << i;
}

TEST(BuiltinNormalize, KeepsTheCpuReferenceBehindAnEnginePointer) {
  std::unique_ptr<ferry::engine> plain = ferry::make_builtin_engine("touch", bytes(24 * 4));
  auto wrapped = ferry::with_u8_normalize(std::move(plain), tiny_images());
  EXPECT_NE(dynamic_cast<host_reference_engine*>(wrapped.get()), nullptr);
  EXPECT_EQ(wrapped->io()[0].shape, (std::vector<std::int64_t>{2, 2, 2, 3}));
}

TEST(BuiltinNormalize, RefusesInnerInputsThatCannotTakeImages) {
  const auto wrap_message = [](const char* spec, std::size_t input_bytes) {
    return invalid_argument_message(
        [&] { (void)ferry::with_u8_normalize(ferry::make_builtin_engine(spec, bytes(input_bytes)), tiny_images()); });
  };
  EXPECT_MESSAGE_HAS(wrap_message("touch", 13 * 4), "whole number");
  EXPECT_MESSAGE_HAS(wrap_message("mlp:1x10", 4096), "cannot take");
  // sparse's first input (table) is f32 but 1024 floats are not a whole number of 3x2x2 images.
  EXPECT_MESSAGE_HAS(wrap_message("sparse:1", 4096), "whole number");

  ferry::normalize_options bad = tiny_images();
  bad.stddev[1] = 0.0F;
  EXPECT_MESSAGE_HAS(invalid_argument_message(
                         [&] { (void)ferry::with_u8_normalize(ferry::make_builtin_engine("touch", bytes(48)), bad); }),
                     "stddev");
  EXPECT_MESSAGE_HAS(
      invalid_argument_message([] { (void)ferry::with_u8_normalize(std::unique_ptr<ferry::engine>(), tiny_images()); }),
      "null");
}

}  // namespace
