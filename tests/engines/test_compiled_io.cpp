// Reading an AOTInductor package's I/O from its generated code, and describing its outputs from
// two probe runs: what `torch:PACKAGE.pt2` does when the package carries no ferry.io/1 description.
// The wrapper text is written the way PyTorch 2.11's AOTInductor writes it (checked against a
// package exported from tests/python/tiny_model.py: input arg4_1, float32 [s31, 256], s31 in
// [2, 64]).
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "engines/torch/compiled_io.hpp"
#include "ferry/core/error.hpp"

namespace {

// Two inputs sharing the batch symbol, which AOTInductor writes out where it first appears only: an
// fp16 image and an int64 mask. A constant checked with _size as well, which is no input, and a
// size line of the kind written before solving an expression, which is no symbol.
constexpr const char* wrapper = R"cpp(
  AOTInductorModel::AOTInductorModel(std::shared_ptr<ConstantMap> constants_map, ...)
      : AOTInductorModelBase(2, 1, 4, device_str, std::move(cubin_dir), true) {
    inputs_info_[0].name = "arg4_1";
    inputs_info_[1].name = "arg5_1";
    constants_info_[0].name = "constant_0_weight";
    outputs_info_[0].name = "output0";
  }
  AOTI_NOINLINE static void check_input_0(AtenTensorHandle* input_handles) {
    ConstantHandle arg4_1 = ConstantHandle(input_handles[0]);
    int32_t arg4_1_expected_dtype = aoti_torch_dtype_float16();
    if (arg4_1_expected_dtype != arg4_1_dtype) {
    }
    auto arg4_1_size = arg4_1.sizes();
    if (arg4_1_size[0] < 2) {
      ss << "input_handles[0]: dim value is too small at 0, " << arg4_1_size[0] << "\n";
    }
    if (arg4_1_size[0] > 64) {
    }
    if (3 != arg4_1_size[1]) {
      << "expected: 3, "
      << "but got: " << arg4_1_size[1]
    }
    if (224 != arg4_1_size[2]) {
    }
    if (224 != arg4_1_size[3]) {
    }
    auto arg4_1_stride = arg4_1.strides();
    if (150528 != arg4_1_stride[1]) {
    }
  }
  AOTI_NOINLINE static void check_input_1(AtenTensorHandle* input_handles) {
    int32_t arg5_1_expected_dtype = aoti_torch_dtype_int64();
    auto arg5_1_size = arg5_1.sizes();
    if (arg5_1_size[0] < 2) {
    }
    if (arg5_1_size[0] > 64) {
    }
  }
  void AOTInductorModel::run_impl(...) {
    auto arg4_1_size = arg4_1.sizes();
    int64_t s31 = arg4_1_size[0];
    auto arg5_1_size = arg5_1.sizes();
    int64_t arg5_1_size_0 = arg5_1_size[0];
    if (7 != constant_0_weight_size[0]) {
    }
    const int64_t int_array_0[] = {s31, 512L};
  }
)cpp";

std::string message_of(auto&& f) {
  try {
    f();
  } catch (const ferry::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CompiledIo, InputsComeFromTheGeneratedChecks) {
  const auto io = ferry::aoti::parse_compiled_io(wrapper, "m.pt2");
  ASSERT_EQ(io.inputs.size(), 2u);
  EXPECT_EQ(io.inputs[0].name, "arg4_1");
  EXPECT_EQ(io.inputs[0].type, ferry::dtype::f16);
  EXPECT_EQ(io.inputs[0].shape, (std::vector<std::int64_t>{ferry::dynamic_dim, 3, 224, 224}));
  EXPECT_EQ(io.dim_symbols[0], (std::vector<std::string>{"s31", "", "", ""}));
  EXPECT_EQ(io.inputs[1].name, "arg5_1");
  EXPECT_EQ(io.inputs[1].type, ferry::dtype::i64);
  EXPECT_EQ(io.dim_symbols[1], (std::vector<std::string>{"s31"}));
  ASSERT_EQ(io.symbols.size(), 1u);
  EXPECT_EQ(io.symbols.at("s31").min, 2);
  EXPECT_EQ(io.symbols.at("s31").max, 64);
}

TEST(CompiledIo, ADynamicDimTakesTheSymbolOfTheSameBoundsOrIsRefused) {
  const auto one = ferry::aoti::parse_compiled_io(R"(
    inputs_info_[0].name = "x";
    inputs_info_[1].name = "y";
    int32_t x_expected_dtype = aoti_torch_dtype_bfloat16();
    int32_t y_expected_dtype = aoti_torch_dtype_bool();
    if (x_size[0] < 2) {
    if (8 != x_size[1]) {
    if (y_size[0] < 2) {
    int64_t s0 = x_size[0];
  )",
                                                  "m.pt2");
  EXPECT_EQ(one.dim_symbols[0], (std::vector<std::string>{"s0", ""}));
  EXPECT_EQ(one.dim_symbols[1], (std::vector<std::string>{"s0"}));
  EXPECT_EQ(one.inputs[1].type, ferry::dtype::boolean);
  // No upper bound written: the symbol has none.
  EXPECT_EQ(one.symbols.at("s0").max, std::numeric_limits<std::int64_t>::max());

  // y's extent has bounds no symbol has (an expression of one, 2 * s0): not guessed.
  EXPECT_NE(message_of([] {
              (void)ferry::aoti::parse_compiled_io(R"(
                inputs_info_[0].name = "x";
                inputs_info_[1].name = "y";
                int32_t x_expected_dtype = aoti_torch_dtype_float32();
                int32_t y_expected_dtype = aoti_torch_dtype_float32();
                if (x_size[0] < 2) {
                if (x_size[0] > 8) {
                if (y_size[0] < 4) {
                if (y_size[0] > 16) {
                int64_t s0 = x_size[0];
              )",
                                                   "m.pt2");
            })
                .find("input 'y' dim 0 is dynamic, and its generated code does not say which dim it shares its extent "
                      "with (0 candidates)"),
            std::string::npos);
}

TEST(CompiledIo, WhatCannotBeReadIsNamed) {
  EXPECT_NE(message_of([] {
              (void)ferry::aoti::parse_compiled_io("int main() {}", "m.pt2");
            }).find("model file 'm.pt2': its generated code names no inputs"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              (void)ferry::aoti::parse_compiled_io(R"(inputs_info_[0].name = "x"; if (3 != x_size[0]) {)", "m.pt2");
            }).find("does not check input 'x''s dtype"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              (void)ferry::aoti::parse_compiled_io(R"(inputs_info_[0].name = "x";
                int32_t x_expected_dtype = aoti_torch_dtype_float64();)",
                                                   "m.pt2");
            }).find("input 'x': unsupported dtype 'float64'"),
            std::string::npos);
  // Dim 1 is checked, dim 0 is not: the rank is known, dim 0 is not.
  EXPECT_NE(message_of([] {
              (void)ferry::aoti::parse_compiled_io(R"(inputs_info_[0].name = "x";
                int32_t x_expected_dtype = aoti_torch_dtype_float32();
                if (4 != x_size[1]) {)",
                                                   "m.pt2");
            }).find("checks input 'x' dim 0 neither as static nor as dynamic"),
            std::string::npos);
}

TEST(CompiledIo, ProbeValuesDifferBetweenRunsAndBetweenSymbols) {
  ferry::aoti::compiled_io io;
  io.symbols = {{"a", {2, 64}}, {"b", {2, 3}}, {"fixed", {5, 5}}};
  io.inputs = {{.name = "x", .type = ferry::dtype::f32, .shape = {ferry::dynamic_dim, ferry::dynamic_dim, 7}}};
  io.dim_symbols = {{"a", "b", ""}};
  const auto runs = ferry::aoti::probe_values(io);
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& run : runs) {
    EXPECT_NE(run.at("a"), run.at("b"));
    for (const auto& [symbol, v] : run) {
      EXPECT_GE(v, io.symbols.at(symbol).min) << symbol;
      EXPECT_LE(v, io.symbols.at(symbol).max) << symbol;
    }
  }
  EXPECT_NE(runs[0].at("a"), runs[1].at("a"));
  EXPECT_NE(runs[0].at("b"), runs[1].at("b"));
  EXPECT_EQ(runs[0].at("fixed"), 5);
  EXPECT_EQ(runs[1].at("fixed"), 5);
  const auto shapes = ferry::aoti::probe_shapes(io, runs[1]);
  ASSERT_EQ(shapes.size(), 1u);
  EXPECT_EQ(shapes[0].name, "x");
  EXPECT_EQ(shapes[0].dims, (std::vector<std::int64_t>{runs[1].at("a"), runs[1].at("b"), 7}));
}

TEST(CompiledIo, OutputsFollowASymbolOrStayStaticElseAreRefused) {
  const auto io = ferry::aoti::parse_compiled_io(wrapper, "m.pt2");
  const auto values = ferry::aoti::probe_values(io);
  const auto batch = [&](int run) { return values[run].at("s31"); };
  std::vector<ferry::aoti::probe_run> runs;
  for (int run = 0; run < 2; ++run)
    runs.push_back({values[run], {{ferry::dtype::f16, {batch(run), 1000}}, {ferry::dtype::f32, {1, batch(run)}}}});
  const auto d = ferry::aoti::describe_compiled("m", io, runs);
  EXPECT_EQ(d.name, "m");
  ASSERT_EQ(d.tensors.size(), 4u);
  EXPECT_EQ(d.tensors[2].name, "output0");
  EXPECT_EQ(d.tensors[2].role, ferry::tensor_role::output);
  EXPECT_EQ(d.tensors[2].type, ferry::dtype::f16);
  EXPECT_EQ(d.tensors[2].shape, (std::vector<std::int64_t>{ferry::dynamic_dim, 1000}));
  EXPECT_EQ(d.dim_symbols[2], (std::vector<std::string>{"s31", ""}));
  EXPECT_EQ(d.dim_symbols[3], (std::vector<std::string>{"", "s31"}));

  // The description is an ordinary one: a batch of 16 resolves every output.
  const std::vector<ferry::shape_binding> shapes{{"arg4_1", {16, 3, 224, 224}}, {"arg5_1", {16}}};
  const auto resolved = ferry::resolve_io(d, shapes);
  EXPECT_EQ(resolved[2].shape, (std::vector<std::int64_t>{16, 1000}));
  EXPECT_EQ(resolved[3].shape, (std::vector<std::int64_t>{1, 16}));

  // 2 * batch follows no one symbol.
  for (int run = 0; run < 2; ++run) runs[run].outputs = {{ferry::dtype::f16, {2 * batch(run), 1000}}};
  EXPECT_NE(message_of([&] {
              (void)ferry::aoti::describe_compiled("m", io, runs);
            }).find("output0 dim 0 was " + std::to_string(2 * batch(0)) + " and then " + std::to_string(2 * batch(1))),
            std::string::npos);
  runs[1].outputs.push_back(runs[1].outputs[0]);
  EXPECT_NE(message_of([&] { (void)ferry::aoti::describe_compiled("m", io, runs); }).find("returned 1 and then 2"),
            std::string::npos);
}

}  // namespace
