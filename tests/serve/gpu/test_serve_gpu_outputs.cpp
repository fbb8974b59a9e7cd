// The session executor's real paths into and out of shared memory: inputs read from a registered
// host range or device memory, outputs delivered into a registered host range (one DMA), bound in
// place in device memory or delivered there by a device-to-device copy, and a batch's outputs
// scattered one copy per request range. Every byte is checked against the answer the same model
// gives in the response body. Batch buckets: a batch of 3 rows runs at bucket 4, answers exactly
// as at the full 16, and moves 4 rows each way, not 16.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "bench/measure/um_counters.hpp"
#include "core/device_memory.hpp"
#include "core/host_registration.hpp"
#include "core/pageable_memory.hpp"
#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"
#include "serve/config/model_config.hpp"
#include "serve/execution/executor.hpp"
#include "serve/execution/session_executor.hpp"
#include "serve/vocabulary/model_signature.hpp"
#include "support/backend_test_paths.hpp"
#include "support/strategy_test_name.hpp"

namespace {

using namespace ferry::serve;
namespace core = ferry::core;

// Host memory page-locked like a registered system region (portable, mapped).
struct registered_host {
  core::pageable_memory bytes;
  core::host_registration registration;
  std::span<std::byte> span;
  explicit registered_host(std::size_t n)
      : bytes(core::allocate_pageable(n)),
        registration(core::register_host(std::span(static_cast<std::byte*>(bytes.get()), n),
                                         cudaHostRegisterPortable | cudaHostRegisterMapped)),
        span(static_cast<std::byte*>(bytes.get()), n) {}
};

struct device_bytes {
  core::device_memory bytes;
  std::span<std::byte> span;
  explicit device_bytes(std::size_t n)
      : bytes(core::allocate_device(n)), span(static_cast<std::byte*>(bytes.get()), n) {}
  [[nodiscard]] std::vector<std::byte> read(std::size_t n) const {
    std::vector<std::byte> host(n);
    FERRY_CUDA_TRY(cudaMemcpy(host.data(), span.data(), n, cudaMemcpyDeviceToHost));
    return host;
  }
};

// One request of `rows` rows (1 without batching) for every input of `signature`, its bytes at
// `input` (or in `body` when empty), asking output 0 into `destination` (empty: the response).
struct one_request {
  infer_request request;
  request_plan plan;
  infer_response response;
  std::vector<std::byte> body;
  output_destination destination;

  one_request(const model_signature& signature, std::int64_t rows, std::span<const std::byte> input,
              std::optional<int> input_device, std::uint8_t seed, output_destination out) {
    const ferry::tensor_spec& spec = signature.inputs.at(0);
    std::vector<std::int64_t> shape = spec.shape;
    if (signature.max_batch > 0) shape.front() = rows;
    ferry::tensor_spec concrete = spec;
    concrete.shape = shape;
    body.resize(concrete.bytes());
    // Small finite values for any dtype: the same byte pattern is f32/f16 numbers of modest size.
    for (std::size_t i = 0; i < body.size(); ++i) body[i] = static_cast<std::byte>(((i * 7 + seed) % 61) & 0x3F);
    input_tensor in{spec.name, spec.type, shape, body, std::nullopt, std::nullopt};
    if (!input.empty()) {
      if (input_device) {
        FERRY_CUDA_TRY(
            cudaMemcpy(const_cast<std::byte*>(input.data()), body.data(), body.size(), cudaMemcpyHostToDevice));
        // From pageable memory cudaMemcpy may return before the DMA has landed, and the session
        // reads the input on its own non-blocking stream: wait, as a client does before it sends.
        FERRY_CUDA_TRY(cudaDeviceSynchronize());
      } else {
        std::memcpy(const_cast<std::byte*>(input.data()), body.data(), body.size());
      }
      in.data = input.first(body.size());
      in.shared_memory = shm_ref{"in", 0, body.size()};
      in.cuda_device = input_device;
    }
    request.inputs.push_back(in);
    requested_output asked{signature.outputs.at(0).name};
    if (!out.empty()) asked.shared_memory = shm_ref{"out", 0, out.bytes.size()};
    request.outputs.push_back(asked);
    destination = out;
    plan = plan_request(signature, request);
  }
  [[nodiscard]] batch_item item() { return {&request, &plan, &response, {destination}}; }
};

class ServeGpuOutputs : public ::testing::TestWithParam<ferry::strategy_kind> {
 protected:
  void SetUp() override {
    caps_ = ferry::query_device(0);
    if (auto reason = ferry::unavailable_reason(GetParam(), caps_)) GTEST_SKIP() << *reason;
  }
  std::unique_ptr<executor> make(const std::string& engine, std::int64_t max_batch) {
    model_config config{.name = "m", .engine = engine, .strategy = GetParam(), .inflight = 2};
    config.max_batch = max_batch;
    config.input_bytes = std::size_t{1} << 20;
    auto exec = make_session_executor(config, {caps_}, {ferry::test::example_backend_dir()});
    signature_ = make_signature(exec->io(), max_batch, "m");
    return exec;
  }
  // The model's answer for one request in the response body.
  std::vector<std::byte> reference(executor& exec, std::int64_t rows, std::uint8_t seed) {
    one_request r(signature_, rows, {}, std::nullopt, seed, {});
    std::vector<batch_item> batch{r.item()};
    (void)exec.execute(batch, 0);
    return r.response.outputs.at(0).data;
  }
  ferry::device_caps caps_;
  model_signature signature_;
};

TEST_P(ServeGpuOutputs, TouchOutputsLandInSystemAndCudaRegionsExactly) {
  auto exec = make("touch", 0);
  const std::size_t bytes = std::size_t{1} << 20;
  const auto expected = reference(*exec, 1, 3);
  ASSERT_EQ(expected.size(), bytes);

  // System region in and out: one DMA each way (copy strategies), bound in place (zero-copy).
  registered_host in_host(bytes), out_host(bytes);
  one_request to_host(signature_, 1, in_host.span, std::nullopt, 3, {out_host.span, std::nullopt});
  std::vector<batch_item> batch{to_host.item()};
  (void)exec->execute(batch, 0);
  EXPECT_EQ(std::memcmp(out_host.span.data(), expected.data(), bytes), 0);
  ASSERT_TRUE(to_host.response.outputs.at(0).shared_memory.has_value());
  EXPECT_EQ(to_host.response.outputs[0].shared_memory->byte_size, bytes);

  // CUDA region in and out, exactly the tensor: read and written in place.
  device_bytes in_dev(bytes), out_dev(bytes);
  one_request in_place(signature_, 1, in_dev.span, 0, 3, {out_dev.span, 0});
  batch = {in_place.item()};
  (void)exec->execute(batch, 1);
  EXPECT_EQ(out_dev.read(bytes), expected);

  // A larger CUDA range: delivered by one device-to-device copy.
  device_bytes larger(bytes + 4096);
  one_request copied(signature_, 1, in_dev.span, 0, 3, {larger.span, 0});
  batch = {copied.item()};
  (void)exec->execute(batch, 0);
  EXPECT_EQ(larger.read(bytes), expected);

  // The slots forget caller memory: a plain request afterwards is answered from its own bytes.
  EXPECT_EQ(reference(*exec, 1, 3), expected);
}

TEST_P(ServeGpuOutputs, BatchedRequestsAreScatteredIntoTheirOwnRanges) {
  auto exec = make("mlp:2x64", 8);
  const auto first = reference(*exec, 2, 5);
  const auto second = reference(*exec, 1, 9);
  const auto third = reference(*exec, 3, 11);
  registered_host host(first.size());
  device_bytes dev(second.size() + 256);
  one_request a(signature_, 2, {}, std::nullopt, 5, {host.span, std::nullopt});
  one_request b(signature_, 1, {}, std::nullopt, 9, {dev.span, 0});
  one_request c(signature_, 3, {}, std::nullopt, 11, {});
  std::vector<batch_item> batch{a.item(), b.item(), c.item()};
  (void)exec->execute(batch, 0);
  EXPECT_EQ(std::memcmp(host.span.data(), first.data(), first.size()), 0);
  EXPECT_EQ(dev.read(second.size()), second);
  EXPECT_EQ(c.response.outputs.at(0).data, third);

  // Inputs from shared memory, merged and padded: gathered by the slot's copies.
  registered_host in_host(a.body.size());
  device_bytes in_dev(b.body.size());
  one_request a2(signature_, 2, in_host.span, std::nullopt, 5, {});
  one_request b2(signature_, 1, in_dev.span, 0, 9, {});
  batch = {a2.item(), b2.item()};
  (void)exec->execute(batch, 1);
  EXPECT_EQ(a2.response.outputs.at(0).data, first);
  EXPECT_EQ(b2.response.outputs.at(0).data, second);
}

// A CUDA shared-memory request moves no byte across PCIe: its input is read where it is and its
// output is written in place, or copied device to device. CUPTI counts every explicit copy of the
// process; the system-region request beside it is the control that the counting works (its input
// and output each cross once). `config` is a model of one 4,800,000-byte f32 input and output.
void expect_no_byte_crosses_the_bus(model_config config) {
  const auto caps = ferry::query_device(0);
  auto exec = make_session_executor(config, {caps}, {ferry::test::example_backend_dir()});
  const model_signature signature = make_signature(exec->io(), config.max_batch, "m");
  const std::size_t bytes = 4800000;
  device_bytes in_dev(bytes), out_dev(bytes), larger(bytes + 4096);
  registered_host in_host(bytes), out_host(bytes);
  {  // warm: the first requests set the slots up; nothing of theirs is counted
    one_request warm(signature, 1, in_dev.span, 0, 1, {out_dev.span, 0});
    std::vector<batch_item> batch{warm.item()};
    (void)exec->execute(batch, 0);
  }
  // Made before counting starts: a request's constructor writes its input with a plain copy.
  one_request in_place(signature, 1, in_dev.span, 0, 3, {out_dev.span, 0});
  one_request copied(signature, 1, in_dev.span, 0, 5, {larger.span, 0});
  one_request host_request(signature, 1, in_host.span, std::nullopt, 7, {out_host.span, std::nullopt});
  auto counters = ferry::bench::um_counter_session::start(0, ferry::bench::copy_counting::on);
  if (!counters.available()) GTEST_SKIP() << counters.reason();
  FERRY_CUDA_TRY(cudaDeviceSynchronize());
  (void)counters.take();

  for (one_request* r : {&in_place, &copied}) {
    std::vector<batch_item> batch{r->item()};
    (void)exec->execute(batch, 0);
  }
  FERRY_CUDA_TRY(cudaDeviceSynchronize());
  ASSERT_TRUE(counters.take().has_value()) << counters.reason();
  EXPECT_EQ(counters.dropped_records(), 0U);
  const ferry::bench::copy_traffic cuda_requests = counters.copies();
  EXPECT_EQ(cuda_requests.host_to_device, 0U);
  EXPECT_EQ(cuda_requests.device_to_host, 0U);
  EXPECT_EQ(cuda_requests.device_to_device, bytes);  // the larger range's one copy; in place: none

  std::vector<batch_item> batch{host_request.item()};
  (void)exec->execute(batch, 0);
  FERRY_CUDA_TRY(cudaDeviceSynchronize());
  ASSERT_TRUE(counters.take().has_value()) << counters.reason();
  EXPECT_EQ(counters.copies().host_to_device, bytes);
  EXPECT_EQ(counters.copies().device_to_host, bytes);
}

TEST(ServeCudaSharedMemory, NoByteOfARequestCrossesTheBus) {
  model_config config{.name = "m", .engine = "touch", .strategy = ferry::strategy_kind::pinned, .inflight = 2};
  config.input_bytes = std::size_t{4800000};
  expect_no_byte_crosses_the_bus(config);
}

// The same through a backend plugin (the example backend, one row of 1,200,000 floats): the
// plugin binds the addresses it is given and copies nothing itself.
TEST(ServeCudaSharedMemory, NoByteOfAPluginModelsRequestCrossesTheBus) {
  const auto model = std::filesystem::temp_directory_path() / "ferry_no_bus_bytes.affine";
  std::ofstream(model) << "format ferry-affine/1\nwidth 1200000\nmax_batch 1\nscale 2\nbias 1\n";
  model_config config{
      .name = "m", .engine = "affine:" + model.string(), .strategy = ferry::strategy_kind::pinned, .inflight = 2};
  config.max_batch = 1;
  expect_no_byte_crosses_the_bus(config);
}

// The example model (y = 2x + 1 on rows of 1024 floats) served at max_batch 16, with `buckets`.
std::unique_ptr<executor> affine_executor(ferry::strategy_kind strategy, std::vector<std::int64_t> buckets,
                                          ferry::graph_mode graph) {
  model_config config{
      .name = "m", .engine = "affine:" + ferry::test::example_model().string(), .strategy = strategy, .inflight = 2};
  config.max_batch = 16;
  config.batch_buckets = std::move(buckets);
  config.graph = graph;
  return make_session_executor(config, {ferry::query_device(0)}, {ferry::test::example_backend_dir()});
}

class ServeGpuBuckets : public ::testing::TestWithParam<ferry::strategy_kind> {};

TEST_P(ServeGpuBuckets, ThreeRowsAtBucketFourAnswerExactlyAsAtTheFullBatchAndMoveFourRows) {
  if (auto reason = ferry::unavailable_reason(GetParam(), ferry::query_device(0))) GTEST_SKIP() << *reason;
  for (const auto graph : {ferry::graph_mode::off, ferry::graph_mode::on}) {
    auto bucketed = affine_executor(GetParam(), {}, graph);  // 1, 2, 4, 8, 16
    auto full = affine_executor(GetParam(), {16}, graph);
    std::vector<std::int64_t> rows;
    for (const auto& b : bucketed->buckets()) {
      rows.push_back(b.rows);
      EXPECT_GT(b.run_time.count(), 0) << "bucket " << b.rows << " was not timed at load";
    }
    ASSERT_EQ(rows, (std::vector<std::int64_t>{1, 2, 4, 8, 16}));
    const model_signature signature = make_signature(bucketed->io(), 16, "m");
    // One request of 3 rows, and three of one row merged: both run at bucket 4.
    one_request three(signature, 3, {}, std::nullopt, 5, {});
    one_request three_full(signature, 3, {}, std::nullopt, 5, {});
    std::vector<batch_item> batch{three.item()};
    EXPECT_EQ(bucketed->execute(batch, 0).run_rows, 4);
    batch = {three_full.item()};
    EXPECT_EQ(full->execute(batch, 0).run_rows, 16);
    const auto& answer = three.response.outputs.at(0);
    EXPECT_EQ(answer.shape, (std::vector<std::int64_t>{3, 1024}));
    EXPECT_EQ(answer.data, three_full.response.outputs.at(0).data) << "a bucket's padding changed an answer";
    const auto* x = reinterpret_cast<const float*>(three.body.data());
    const auto* y = reinterpret_cast<const float*>(answer.data.data());
    for (std::size_t i = 0; i < 3 * 1024; ++i) ASSERT_EQ(y[i], 2.0F * x[i] + 1.0F) << "element " << i;
    one_request a(signature, 1, {}, std::nullopt, 7, {}), b(signature, 1, {}, std::nullopt, 9, {}),
        c(signature, 1, {}, std::nullopt, 11, {});
    batch = {a.item(), b.item(), c.item()};
    EXPECT_EQ(bucketed->execute(batch, 1).run_rows, 4);
    for (one_request* r : {&a, &b, &c}) {
      const auto* rx = reinterpret_cast<const float*>(r->body.data());
      const auto* ry = reinterpret_cast<const float*>(r->response.outputs.at(0).data.data());
      for (std::size_t i = 0; i < 1024; ++i) ASSERT_EQ(ry[i], 2.0F * rx[i] + 1.0F);
    }
  }
}

TEST(ServeGpuBucketCopies, ABatchOfThreeRowsMovesItsBucketsRowsNotMaxBatchs) {
  auto bucketed = affine_executor(ferry::strategy_kind::pinned, {1, 4, 16}, ferry::graph_mode::off);
  auto full = affine_executor(ferry::strategy_kind::pinned, {16}, ferry::graph_mode::off);
  const model_signature signature = make_signature(bucketed->io(), 16, "m");
  auto counters = ferry::bench::um_counter_session::start(0, ferry::bench::copy_counting::on);
  if (!counters.available()) GTEST_SKIP() << counters.reason();
  const std::size_t row = 1024 * sizeof(float);
  for (const auto& [exec, moved] : {std::pair{bucketed.get(), 4 * row}, std::pair{full.get(), 16 * row}}) {
    one_request three(signature, 3, {}, std::nullopt, 5, {});
    FERRY_CUDA_TRY(cudaDeviceSynchronize());
    (void)counters.take();
    std::vector<batch_item> batch{three.item()};
    (void)exec->execute(batch, 0);
    FERRY_CUDA_TRY(cudaDeviceSynchronize());
    ASSERT_TRUE(counters.take().has_value()) << counters.reason();
    EXPECT_EQ(counters.copies().host_to_device, moved);
    EXPECT_EQ(counters.copies().device_to_host, moved);
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, ServeGpuBuckets,
                         ::testing::Values(ferry::strategy_kind::pinned, ferry::strategy_kind::staged,
                                           ferry::strategy_kind::device, ferry::strategy_kind::mapped,
                                           ferry::strategy_kind::managed_prefetch),
                         strategy_test_name);

INSTANTIATE_TEST_SUITE_P(Strategies, ServeGpuOutputs,
                         ::testing::Values(ferry::strategy_kind::pinned, ferry::strategy_kind::staged,
                                           ferry::strategy_kind::device, ferry::strategy_kind::mapped,
                                           ferry::strategy_kind::managed, ferry::strategy_kind::managed_prefetch),
                         strategy_test_name);

}  // namespace
