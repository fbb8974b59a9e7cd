// A slot fed from and delivering to caller memory, under every strategy: inputs gathered from
// registered host and device ranges with the gaps zero-filled, output ranges delivered into
// registered host and device memory in stream order, an output bound in place, the host view
// refused when it was left out, and every request after them answered from its own bytes.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <vector>

#include "core/device_memory.hpp"
#include "core/host_registration.hpp"
#include "core/pageable_memory.hpp"
#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/engines/builtin.hpp"
#include "ferry/session/session.hpp"
#include "support/strategy_test_name.hpp"

namespace {

using ferry::strategy_kind;
namespace core = ferry::core;

constexpr std::size_t elements = 16384;  // touch: out = 2 * in + 1
constexpr std::size_t bytes = elements * sizeof(float);

struct registered_floats {
  core::pageable_memory storage = core::allocate_pageable(bytes);
  core::host_registration registration = core::register_host(std::span(static_cast<std::byte*>(storage.get()), bytes),
                                                             cudaHostRegisterPortable | cudaHostRegisterMapped);
  float* data() const { return static_cast<float*>(storage.get()); }
  std::span<std::byte> span() const { return {static_cast<std::byte*>(storage.get()), bytes}; }
};

struct device_floats {
  core::device_memory storage = core::allocate_device(bytes);
  std::span<std::byte> span() const { return {static_cast<std::byte*>(storage.get()), bytes}; }
  void upload(const std::vector<float>& v) const {
    FERRY_CUDA_TRY(cudaMemcpy(storage.get(), v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  std::vector<float> download() const {
    std::vector<float> v(elements);
    FERRY_CUDA_TRY(cudaMemcpy(v.data(), storage.get(), bytes, cudaMemcpyDeviceToHost));
    return v;
  }
};

class SessionCallerMemory : public ::testing::TestWithParam<strategy_kind> {
 protected:
  void SetUp() override {
    caps_ = ferry::query_device(0);
    if (auto reason = ferry::unavailable_reason(GetParam(), caps_)) GTEST_SKIP() << *reason;
    engine_ = ferry::make_builtin_engine("touch", {.input_bytes = bytes});
    session_ = std::make_unique<ferry::session>(*engine_, engine_->resolve({}),
                                                ferry::session_options{.strategy = GetParam(), .inflight = 2}, caps_);
  }
  // A plain request through the host views: the slot forgot any caller memory it was given.
  void expect_plain_request_answers(float value) {
    auto filling = session_->acquire();
    auto* in = reinterpret_cast<float*>(filling.input(0).data());
    for (std::size_t i = 0; i < elements; ++i) in[i] = value;
    filling.upload_resident_inputs();
    auto done = std::move(filling).submit().wait();
    done.download_resident_outputs();
    const auto* out = reinterpret_cast<const float*>(done.output(0).data());
    EXPECT_EQ(out[0], 2 * value + 1);
    EXPECT_EQ(out[elements - 1], 2 * value + 1);
  }
  ferry::device_caps caps_;
  std::unique_ptr<ferry::engine> engine_;
  std::unique_ptr<ferry::session> session_;
};

TEST_P(SessionCallerMemory, GatheredInputsLandAtTheirOffsetsAndTheGapsAreZero) {
  registered_floats host;
  device_floats device;
  std::vector<float> on_device(elements, 5.0F);
  device.upload(on_device);
  for (std::size_t i = 0; i < elements; ++i) host.data()[i] = 3.0F;
  const std::size_t quarter = bytes / 4;
  // [0, q): 3 from host; [q, 2q): zero; [2q, 3q): 5 from the GPU; [3q, 4q): zero.
  const std::vector<ferry::gather_piece> pieces{{host.span().first(quarter), 0},
                                                {device.span().first(quarter), 2 * quarter}};
  auto filling = session_->acquire();
  filling.gather_input(0, pieces);
  filling.upload_resident_inputs();
  auto done = std::move(filling).submit().wait();
  done.download_resident_outputs();
  const auto* out = reinterpret_cast<const float*>(done.output(0).data());
  const std::size_t q = elements / 4;
  for (std::size_t i = 0; i < elements; ++i) {
    const float expected = i < q ? 7.0F : (i >= 2 * q && i < 3 * q) ? 11.0F : 1.0F;
    ASSERT_EQ(out[i], expected) << "element " << i;
  }
  { [[maybe_unused]] auto released = std::move(done); }  // the slot goes back to the pool
  expect_plain_request_answers(2.0F);
}

TEST_P(SessionCallerMemory, OutputRangesAreDeliveredAndTheHostViewIsRefusedWhenLeftOut) {
  registered_floats input, host_out;
  device_floats device_out;
  for (std::size_t i = 0; i < elements; ++i) input.data()[i] = static_cast<float>(i);
  auto filling = session_->acquire();
  if (filling.input_in_place_refusal(0, input.span())) {  // managed strategies: through the host view
    std::memcpy(filling.input(0).data(), input.data(), bytes);
    filling.upload_resident_inputs();
  } else {
    filling.use_caller_input(0, input.span());
  }
  const std::size_t half = bytes / 2;
  filling.deliver_output(0, {0, host_out.span().first(half)}, ferry::filling_slot::host_view::skipped);
  filling.deliver_output(0, {half, device_out.span().first(half)}, ferry::filling_slot::host_view::skipped);
  auto done = std::move(filling).submit().wait();
  for (std::size_t i = 0; i < elements / 2; ++i) ASSERT_EQ(host_out.data()[i], 2.0F * static_cast<float>(i) + 1);
  const auto second = device_out.download();
  for (std::size_t i = 0; i < elements / 2; ++i) ASSERT_EQ(second[i], 2.0F * static_cast<float>(i + elements / 2) + 1);
  EXPECT_THROW((void)done.output(0), ferry::unsupported);
  { [[maybe_unused]] auto released = std::move(done); }  // the slot goes back to the pool
  expect_plain_request_answers(4.0F);
}

TEST_P(SessionCallerMemory, AnOutputBoundInPlaceIsWrittenByTheEngine) {
  device_floats input, output;
  std::vector<float> values(elements);
  for (std::size_t i = 0; i < elements; ++i) values[i] = static_cast<float>(i % 97);
  input.upload(values);
  auto filling = session_->acquire();
  ASSERT_FALSE(filling.output_in_place_refusal(0, output.span()));
  filling.use_caller_input(0, input.span());
  filling.bind_caller_output(0, output.span());
  auto done = std::move(filling).submit().wait();
  const auto out = output.download();
  for (std::size_t i = 0; i < elements; ++i) ASSERT_EQ(out[i], 2 * values[i] + 1) << "element " << i;
  EXPECT_THROW((void)done.output(0), ferry::unsupported);
  { [[maybe_unused]] auto released = std::move(done); }  // the slot goes back to the pool
  expect_plain_request_answers(6.0F);
}

TEST_P(SessionCallerMemory, PageableMemoryIsRefusedInPlaceSayingWhy) {
  std::vector<std::byte> pageable(bytes);
  auto filling = session_->acquire();
  const auto refusal = filling.input_in_place_refusal(0, pageable);
  ASSERT_TRUE(refusal.has_value());
  EXPECT_FALSE(refusal->reason.empty());
  EXPECT_ANY_THROW(filling.use_caller_input(0, pageable));
}

INSTANTIATE_TEST_SUITE_P(Strategies, SessionCallerMemory, ::testing::ValuesIn(ferry::all_strategies),
                         strategy_test_name);

}  // namespace
