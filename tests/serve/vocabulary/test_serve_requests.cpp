// Requests checked against a model's signature, and batches moved in and out of an engine run:
// every response is built from its own request's rows.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ferry/core/error.hpp"
#include "serve/execution/batch_io.hpp"
#include "serve/service/index_values.hpp"
#include "serve/vocabulary/model_signature.hpp"
#include "serve/vocabulary/request_error.hpp"
#include "support/serve_errors.hpp"

namespace {

using namespace ferry::serve;
using ferry::dtype;
using ferry::dynamic_dim;
using ferry::tensor_role;
using ferry::tensor_spec;

std::vector<tensor_spec> batched_io() {
  return {{"x", dtype::f32, {dynamic_dim, 2}, tensor_role::input, std::nullopt},
          {"k", dtype::i32, {dynamic_dim}, tensor_role::input, std::nullopt},
          {"y", dtype::f32, {dynamic_dim, 2}, tensor_role::output, std::nullopt}};
}

// A request of `rows` rows; x holds row-major values base, base + 1, ...
struct owned_request {
  infer_request request;
  std::vector<float> x;
  std::vector<std::int32_t> k;
  owned_request(std::int64_t rows, float base)
      : x(static_cast<std::size_t>(rows) * 2), k(static_cast<std::size_t>(rows)) {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = base + static_cast<float>(i);
    request.model = "m";
    // Given in the other order: planning sorts inputs into engine order.
    request.inputs.push_back({"k", dtype::i32, {rows}, std::as_bytes(std::span(k)), std::nullopt});
    request.inputs.push_back({"x", dtype::f32, {rows, 2}, std::as_bytes(std::span(x)), std::nullopt});
  }
};

using ferry::serve::testing::error_of;

TEST(ServeSignature, BatchingNeedsADynamicLeadingDim) {
  EXPECT_NO_THROW((void)make_signature(batched_io(), 8, "m"));
  EXPECT_THROW((void)make_signature(batched_io(), 0, "m"), ferry::invalid_argument);
  const std::vector<tensor_spec> fixed{{"x", dtype::f32, {4}, tensor_role::input, std::nullopt}};
  EXPECT_NO_THROW((void)make_signature(fixed, 0, "m"));
  EXPECT_THROW((void)make_signature(fixed, 4, "m"), ferry::invalid_argument);
  const std::vector<tensor_spec> inner{{"x", dtype::f32, {2, dynamic_dim}, tensor_role::input, std::nullopt}};
  EXPECT_THROW((void)make_signature(inner, 0, "m"), ferry::invalid_argument);
}

TEST(ServeSignature, PlansAndOrdersInputs) {
  const auto sig = make_signature(batched_io(), 8, "m");
  owned_request r(3, 0);
  const request_plan plan = plan_request(sig, r.request);
  EXPECT_EQ(plan.rows, 3);
  EXPECT_EQ(r.request.inputs[0].name, "x");
  EXPECT_EQ(plan.outputs, (std::vector<std::size_t>{0}));
}

TEST(ServeSignature, RefusesBadRequestsNamingTheTensor) {
  const auto sig = make_signature(batched_io(), 8, "m");
  const auto plan = [&](const std::function<void(infer_request&)>& spoil) {
    return [&sig, spoil] {
      owned_request r(2, 0);
      spoil(r.request);
      (void)plan_request(sig, r.request);
    };
  };
  EXPECT_NE(error_of(plan([](auto& q) { q.inputs[0].name = "q"; })).find("no input 'q'"), std::string::npos);
  EXPECT_NE(error_of(plan([](auto& q) { q.inputs.pop_back(); })).find("input 'x' is missing"), std::string::npos);
  EXPECT_NE(error_of(plan([](auto& q) { q.inputs.push_back(q.inputs[0]); })).find("'k' is given 2 times"),
            std::string::npos);
  EXPECT_NE(
      error_of(plan([](auto& q) { q.inputs[1].type = dtype::f16; })).find("datatype FP32, the request gives FP16"),
      std::string::npos);
  EXPECT_NE(error_of(plan([](auto& q) { q.inputs[1].shape = {2, 2, 1}; })).find("wrong rank"), std::string::npos);
  EXPECT_NE(error_of(plan([](auto& q) {
              q.inputs[1].shape = {1, 4};
            })).find("[-1,2], the request gives [1,4]"),
            std::string::npos);
  EXPECT_NE(error_of(plan([](auto& q) { q.inputs[1].shape = {9, 2}; })).find("batch 9"), std::string::npos);
  EXPECT_NE(error_of(plan([](auto& q) {
              q.inputs[1].shape = {1, 2};
              q.inputs[1].data = q.inputs[1].data.first(8);
            })).find("input 'k' has batch 2 but input 'x' has 1"),
            std::string::npos);
  EXPECT_NE(error_of(plan([](auto& q) { q.inputs[1].data = q.inputs[1].data.first(4); })).find("needs 16 bytes"),
            std::string::npos);
  EXPECT_NE(error_of(plan([](auto& q) {
              q.outputs.push_back({"nope", std::nullopt});
            })).find("no output 'nope'"),
            std::string::npos);
  EXPECT_NE(error_of(plan([](auto& q) {
              q.outputs = {{"y", std::nullopt}, {"y", std::nullopt}};
            })).find("twice"),
            std::string::npos);
}

// What front ends check of each input before decoding its data: plan_request's own messages.
TEST(ServeSignature, ChecksOneInputAloneAsPlanningWould) {
  const auto sig = make_signature(batched_io(), 8, "m");
  const auto check = [&](input_tensor in) { return [&sig, in] { check_input(sig, "m", in); }; };
  EXPECT_NO_THROW(check_input(sig, "m", {"x", dtype::f32, {3, 2}, {}, std::nullopt}));
  EXPECT_NE(error_of(check({"q", dtype::f32, {3, 2}, {}, std::nullopt})).find("model 'm' has no input 'q'"),
            std::string::npos);
  EXPECT_NE(error_of(check({"x", dtype::i32, {3, 2}, {}, std::nullopt})).find("datatype FP32, the request gives INT32"),
            std::string::npos);
  EXPECT_NE(error_of(check({"x", dtype::f32, {3, 4}, {}, std::nullopt})).find("[-1,2], the request gives [3,4]"),
            std::string::npos);
  EXPECT_NE(error_of(check({"x", dtype::f32, {1LL << 40, 2}, {}, std::nullopt})).find("batch 1099511627776"),
            std::string::npos);
  EXPECT_NE(error_of(check({"x", dtype::f32, std::vector<std::int64_t>(5000, 1), {}, std::nullopt})).find("wrong rank"),
            std::string::npos);
}

// A request tensor of 256 KiB or more is streamed into a slot's input (gathered_for::device): the
// same bytes as the host executor's ordinary copy, at an offset that is not 16-byte aligned.
TEST(ServeBatchIo, LargeInputsGatherTheSameBytesForTheDeviceAsForTheHost) {
  const auto sig = make_signature(batched_io(), 1 << 20, "m");
  owned_request small(3, 0), large(40000, 7);  // 24 bytes of x, then 320,000
  const auto plan_small = plan_request(sig, small.request);
  const auto plan_large = plan_request(sig, large.request);
  infer_response rs, rl;
  std::vector<batch_item> batch{{&small.request, &plan_small, &rs, {}}, {&large.request, &plan_large, &rl, {}}};
  std::vector<float> expected = small.x;
  expected.insert(expected.end(), large.x.begin(), large.x.end());
  expected.resize(expected.size() + 10, 0.0F);  // padding rows
  for (const gathered_for reader : {gathered_for::host, gathered_for::device}) {
    std::vector<float> x(expected.size(), -1.0F);
    gather_input(batch, 0, std::as_writable_bytes(std::span(x)), reader);
    EXPECT_EQ(x, expected) << (reader == gathered_for::host ? "host" : "device");
  }
}

TEST(ServeBatchIo, GathersPadsAndScattersEachRequestsOwnRows) {
  const auto sig = make_signature(batched_io(), 8, "m");
  owned_request a(1, 100), b(3, 200);
  const auto plan_a = plan_request(sig, a.request);
  const auto plan_b = plan_request(sig, b.request);
  infer_response ra, rb;
  std::vector<batch_item> batch{{&a.request, &plan_a, &ra, {}}, {&b.request, &plan_b, &rb, {}}};
  EXPECT_EQ(total_rows(batch), 4);
  EXPECT_EQ(batch_shapes(batch, sig, 4)[0].dims, (std::vector<std::int64_t>{4, 2}));

  // A fixed engine batch of 6 rows: 4 real, 2 zero-padded.
  std::vector<float> x(12, -1.0F);
  gather_input(batch, 0, std::as_writable_bytes(std::span(x)), gathered_for::device);
  EXPECT_EQ(x, (std::vector<float>{100, 101, 200, 201, 202, 203, 204, 205, 0, 0, 0, 0}));
  std::vector<float> too_small(4);
  EXPECT_THROW(gather_input(batch, 0, std::as_writable_bytes(std::span(too_small)), gathered_for::device),
               ferry::invalid_argument);

  // The engine's output: y = x (rows as gathered, padding included).
  const std::vector<tensor_spec> outputs{{"y", dtype::f32, {6, 2}, tensor_role::output, std::nullopt}};
  const std::vector<std::span<const std::byte>> sources{std::as_bytes(std::span(x))};
  scatter_outputs(batch, sig, outputs, sources);
  ASSERT_EQ(ra.outputs.size(), 1U);
  ASSERT_EQ(rb.outputs.size(), 1U);
  EXPECT_EQ(ra.outputs[0].shape, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(rb.outputs[0].shape, (std::vector<std::int64_t>{3, 2}));
  std::vector<float> got_a(2), got_b(6);
  std::memcpy(got_a.data(), ra.outputs[0].data.data(), 8);
  std::memcpy(got_b.data(), rb.outputs[0].data.data(), 24);
  EXPECT_EQ(got_a, a.x);
  EXPECT_EQ(got_b, b.x);
}

}  // namespace

namespace {

// Index inputs are checked on the host before the request is queued: an id out of range is the
// client's mistake (400), never the model's assert.
TEST(ServeSignature, IndexValuesOutsideTheirBoundAreRefusedBeforeQueueing) {
  const std::vector<tensor_spec> io{{"ids", dtype::i64, {dynamic_dim, 3}, tensor_role::input, 30522},
                                    {"mask", dtype::i64, {dynamic_dim, 3}, tensor_role::input, std::nullopt},
                                    {"y", dtype::f32, {dynamic_dim, 3}, tensor_role::output, std::nullopt}};
  const auto sig = make_signature(io, 4, "bert");
  EXPECT_EQ(index_bounds_text(sig), "ids=30522, mask=none");
  std::vector<std::int64_t> ids = {1, 2, 3, 4, 99999, 6};
  std::vector<std::int64_t> mask = {-7, 1, 1, 1, 1, 1};  // no bound: any value goes to the model
  infer_request r;
  r.model = "bert";
  r.inputs.push_back({"ids", dtype::i64, {2, 3}, std::as_bytes(std::span(ids)), std::nullopt});
  r.inputs.push_back({"mask", dtype::i64, {2, 3}, std::as_bytes(std::span(mask)), std::nullopt});
  (void)plan_request(sig, r);
  const std::string text = error_of([&] { check_index_values(sig, r); });
  EXPECT_EQ(text, "model 'bert': input 'ids': value 99999 at [1, 1] is outside [0, 30522)");
  ids[4] = 5;
  EXPECT_NO_THROW(check_index_values(sig, r));
  // Device memory (a CUDA shared-memory input) is not read on the host: the GPU checks it.
  ids[4] = -1;
  r.inputs[0].cuda_device = 0;
  EXPECT_NO_THROW(check_index_values(sig, r));
}

}  // namespace
