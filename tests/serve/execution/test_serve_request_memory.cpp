// What a request holds on the host, and what happens when memory for it runs out: a lone
// request's input is read where it came, its output handed to its response whole (no copies a
// 1000 MiB request would pay 1000 MiB each for), with answers identical to the copying path; and
// memory a run cannot have fails that request alone as out_of_memory (HTTP 503, gRPC
// RESOURCE_EXHAUSTED), counted by stage, its batch-mates answered.
#include <gtest/gtest.h>

#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "ferry/engines/builtin.hpp"
#include "serve/execution/batch_io.hpp"
#include "serve/execution/host_executor.hpp"
#include "serve/observability/allocation_failures.hpp"
#include "serve/scheduling/model_scheduler.hpp"
#include "serve/vocabulary/request_error.hpp"

namespace {

using namespace ferry::serve;
using ferry::dtype;
using ferry::dynamic_dim;
using ferry::tensor_role;
using ferry::tensor_spec;

constexpr std::size_t elements = 256;

// touch (y = 2x + 1) on the host, one request of `x` read at `x`'s address as it is.
std::vector<float> touch_on_host(executor& exec, const model_signature& sig, std::span<const float> x) {
  infer_request request;
  request.inputs.push_back(
      {"input", dtype::f32, {static_cast<std::int64_t>(x.size())}, std::as_bytes(x), std::nullopt});
  const request_plan plan = plan_request(sig, request);
  infer_response response;
  std::vector<batch_item> batch{{&request, &plan, &response, {}}};
  (void)exec.execute(batch, 0);
  std::vector<float> y(response.outputs.at(0).data.size() / sizeof(float));
  std::memcpy(y.data(), response.outputs[0].data.data(), y.size() * sizeof(float));
  return y;
}

TEST(ServeRequestMemory, ALoneRequestIsAnsweredTheSameInPlaceOrCopied) {
  ferry::builtin_options options;
  options.input_bytes = elements * sizeof(float);
  auto engine = ferry::make_builtin_engine("touch", options);
  const model_signature sig = make_signature(engine->io(), 0, "touch");
  const auto exec = make_host_executor(std::move(engine), sig, 1);
  // Aligned: read in place. One float in: misaligned for an allocation, copied first.
  std::vector<float> storage(elements + 1);
  for (std::size_t i = 0; i < storage.size(); ++i) storage[i] = static_cast<float>(i);
  const std::span<const float> aligned(storage.data(), elements);
  std::vector<std::byte> shifted(elements * sizeof(float) + 4);
  std::memcpy(shifted.data() + 4, storage.data(), elements * sizeof(float));
  const std::span<const float> misaligned(reinterpret_cast<const float*>(shifted.data() + 4), elements);
  const auto y = touch_on_host(*exec, sig, aligned);
  EXPECT_EQ(touch_on_host(*exec, sig, misaligned), y);
  ASSERT_EQ(y.size(), elements);
  for (std::size_t i = 0; i < elements; ++i) EXPECT_EQ(y[i], 2.0F * static_cast<float>(i) + 1.0F) << i;
  EXPECT_EQ(storage[3], 3.0F);  // the request's bytes are read, never written
}

TEST(ServeRequestMemory, ALoneRequestsResponseTakesTheEngineOutputWhole) {
  const std::vector<tensor_spec> io{{"x", dtype::f32, {4}, tensor_role::input, std::nullopt},
                                    {"y", dtype::f32, {4}, tensor_role::output, std::nullopt}};
  const model_signature sig = make_signature(io, 0, "m");
  infer_request request;
  std::vector<float> x(4);
  request.inputs.push_back({"x", dtype::f32, {4}, std::as_bytes(std::span(x)), std::nullopt});
  const request_plan plan = plan_request(sig, request);
  infer_response response;
  std::vector<batch_item> batch{{&request, &plan, &response, {}}};
  std::vector<std::vector<std::byte>> owned{std::vector<std::byte>(16, std::byte{7})};
  const std::byte* engine_buffer = owned[0].data();
  const std::vector<std::span<const std::byte>> sources{owned[0]};
  const std::vector<tensor_spec> outputs{io[1]};
  scatter_outputs(batch, sig, outputs, sources, owned);
  ASSERT_EQ(response.outputs.size(), 1U);
  EXPECT_EQ(response.outputs[0].data.data(), engine_buffer);  // moved, not copied
  EXPECT_EQ(response.outputs[0].data, std::vector<std::byte>(16, std::byte{7}));
}

// Runs y = x, but cannot allocate for a request whose first value is `no_memory`.
class hungry_executor final : public executor {
 public:
  static constexpr float no_memory = -7.0F;
  [[nodiscard]] const std::vector<tensor_spec>& io() const override { return io_; }
  [[nodiscard]] int workers() const override { return 1; }
  [[nodiscard]] std::string platform() const override { return "hungry"; }
  batch_timing execute(std::span<batch_item> batch, int /*worker*/) override {
    std::vector<float> x(static_cast<std::size_t>(total_rows(batch)));
    gather_input(batch, 0, std::as_writable_bytes(std::span(x)), gathered_for::host);
    for (const float v : x)
      if (v == no_memory) throw std::bad_alloc();
    const std::vector<tensor_spec> out{
        {"y", dtype::f32, {static_cast<std::int64_t>(x.size())}, tensor_role::output, std::nullopt}};
    const std::vector<std::span<const std::byte>> sources{std::as_bytes(std::span(x))};
    scatter_outputs(batch, signature(), out, sources);
    return {};
  }
  [[nodiscard]] model_signature signature() const { return make_signature(io_, 8, "m"); }

 private:
  std::vector<tensor_spec> io_{{"x", dtype::f32, {dynamic_dim}, tensor_role::input, std::nullopt},
                               {"y", dtype::f32, {dynamic_dim}, tensor_role::output, std::nullopt}};
};

pending_response send(model_scheduler& s, const model_signature& sig, std::vector<float>& x) {
  submission work;
  work.request.model = "m";
  work.request.inputs.push_back(
      {"x", dtype::f32, {static_cast<std::int64_t>(x.size())}, std::as_bytes(std::span(x)), std::nullopt});
  work.plan = plan_request(sig, work.request);
  return s.submit(std::move(work));
}

TEST(ServeRequestMemory, MemoryARunCannotHaveFailsThatRequestAlone) {
  auto exec = std::make_shared<hungry_executor>();
  const auto sig = exec->signature();
  model_statistics stats;
  const auto before = allocation_failures(allocation_stage::execute);
  {
    model_scheduler scheduler("m", "1", exec, sig, {8, std::chrono::milliseconds(30)}, stats);
    std::vector<float> good{1}, hungry{hungry_executor::no_memory}, also_good{2, 3};
    auto a = send(scheduler, sig, good);
    auto b = send(scheduler, sig, hungry);
    auto c = send(scheduler, sig, also_good);
    EXPECT_EQ(a.get().outputs.at(0).data.size(), 4U);
    try {
      (void)b.get();
      ADD_FAILURE() << "the request without memory succeeded";
    } catch (const request_error& e) {
      EXPECT_EQ(e.status(), error_status::out_of_memory);
      EXPECT_EQ(std::string(e.what()),
                "the server could not allocate memory for this request (execute): try again shortly, or send a "
                "smaller request");
    }
    EXPECT_EQ(c.get().outputs.at(0).data.size(), 8U);
  }
  EXPECT_EQ(allocation_failures(allocation_stage::execute), before + 1);
  EXPECT_NE(render_allocation_failures().find("ferry_allocation_failures{stage=\"execute\"} " +
                                              std::to_string(before + 1) + "\n"),
            std::string::npos);
}

TEST(ServeRequestMemory, OutOfMemoryIsAServerThatIsFullNow) {
  EXPECT_EQ(http_status(error_status::out_of_memory), 503);
  const auto before = allocation_failures(allocation_stage::decode);
  EXPECT_EQ(allocation_failure(allocation_stage::decode).status(), error_status::out_of_memory);
  EXPECT_EQ(allocation_failures(allocation_stage::decode), before + 1);
}

}  // namespace
