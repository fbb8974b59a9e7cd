// Where each requested output of a batch goes on a GPU slot (bound in place, delivered by a copy
// from the slot's device output, or read into the response) and why: pure planning, tested
// without a GPU (destination ranges here are host bytes that are never written).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/core/error.hpp"
#include "ferry/memory/buffer.hpp"
#include "serve/execution/batch_io.hpp"
#include "serve/execution/output_routing.hpp"

namespace {

using namespace ferry::serve;
using ferry::strategy_kind;

struct aligned_bytes {
  alignas(ferry::device_alignment) std::byte data[8192]{};
};

// One request asking for output 0 of `rows` rows, into `destination` when it is not empty.
struct one_request {
  infer_request request;
  request_plan plan;
  infer_response response;
  output_destination destination;
  one_request(std::int64_t rows, std::span<std::byte> bytes, std::optional<int> cuda_device) {
    plan.rows = rows;
    plan.outputs = {0};
    destination = {bytes, cuda_device};
    requested_output out{"y"};
    if (!bytes.empty()) out.shared_memory = shm_ref{"r", 0, bytes.size()};
    request.outputs.push_back(out);
  }
  [[nodiscard]] batch_item item() { return {&request, &plan, &response, {destination}}; }
};

// An output of `rows` rows of 64 bytes each (u8), batched when max_batch > 0.
ferry::tensor_spec output_of(std::int64_t rows) {
  return {"y", ferry::dtype::u8, {rows, 64}, ferry::tensor_role::output};
}

output_plan plan(std::vector<one_request*> requests, std::int64_t engine_rows, std::int64_t max_batch,
                 strategy_kind strategy = strategy_kind::pinned) {
  std::vector<batch_item> batch;
  for (auto* r : requests) batch.push_back(r->item());
  model_signature signature;
  signature.max_batch = max_batch;
  const std::vector<ferry::tensor_spec> outputs{output_of(engine_rows)};
  return plan_outputs(batch, signature, outputs, {.strategy = strategy, .device = 0, .graph_active = false});
}

TEST(ServeOutputRouting, ExactAlignedCudaRangeIsBoundInPlaceUnderEveryStrategy) {
  aligned_bytes memory;
  one_request cuda(1, std::span(memory.data, 64), 0);
  for (const auto strategy : ferry::all_strategies) {
    const auto p = plan({&cuda}, 1, 0, strategy);
    ASSERT_EQ(p.steps.size(), 1U);
    EXPECT_EQ(p.steps[0].route, output_route::bind_in_place) << ferry::to_string(strategy);
    EXPECT_FALSE(p.host_view_needed[0]) << "nothing of the request is read on the host";
  }
}

TEST(ServeOutputRouting, CudaRangeThatIsLargerMisalignedOnAnotherGpuOrInAGraphIsDeliveredByOneCopy) {
  aligned_bytes memory;
  one_request larger(1, std::span(memory.data, 128), 0);
  EXPECT_EQ(plan({&larger}, 1, 0).steps[0].route, output_route::deliver);
  one_request misaligned(1, std::span(memory.data + 16, 64), 0);
  EXPECT_EQ(plan({&misaligned}, 1, 0).steps[0].route, output_route::deliver);
  // Another GPU's range is refused in place by the session's rule; the scheduler never places it
  // there (the slot's delivery refuses it too).
  one_request other_gpu(1, std::span(memory.data, 64), 1);
  EXPECT_EQ(plan({&other_gpu}, 1, 0).steps[0].route, output_route::deliver);
  std::vector<batch_item> batch{larger.item()};
  const std::vector<ferry::tensor_spec> outputs{output_of(1)};
  const auto graph = plan_outputs(batch, model_signature{}, outputs,
                                  {.strategy = strategy_kind::pinned, .device = 0, .graph_active = true});
  EXPECT_EQ(graph.steps[0].route, output_route::deliver);
}

TEST(ServeOutputRouting, SystemRangeIsDeliveredByDmaUnderCopiesAndBoundUnderZeroCopy) {
  aligned_bytes memory;
  one_request shm(1, std::span(memory.data, 64), std::nullopt);
  EXPECT_EQ(plan({&shm}, 1, 0, strategy_kind::pinned).steps[0].route, output_route::deliver);
  EXPECT_EQ(plan({&shm}, 1, 0, strategy_kind::device).steps[0].route, output_route::deliver);
  EXPECT_EQ(plan({&shm}, 1, 0, strategy_kind::managed).steps[0].route, output_route::deliver);
  EXPECT_EQ(plan({&shm}, 1, 0, strategy_kind::mapped).steps[0].route, output_route::bind_in_place);
  EXPECT_FALSE(plan({&shm}, 1, 0).host_view_needed[0]);
}

// Outputs of one model may go by different strategies (tensor_strategies): each is planned by its
// own. Two exact, aligned system ranges: the mapped output is bound in place, the pinned one is
// delivered by a DMA.
TEST(ServeOutputRouting, EachOutputIsPlannedByItsOwnStrategy) {
  aligned_bytes memory;
  infer_request request;
  request.outputs = {{"y", shm_ref{"r", 0, 64}}, {"z", shm_ref{"r", 1024, 64}}};
  request_plan plan{.rows = 1, .outputs = {0, 1}};
  infer_response response;
  const std::vector<batch_item> batch{{&request,
                                       &plan,
                                       &response,
                                       {output_destination{std::span(memory.data, 64), std::nullopt},
                                        output_destination{std::span(memory.data + 1024, 64), std::nullopt}}}};
  std::vector<ferry::tensor_spec> outputs{output_of(1), output_of(1)};
  outputs[1].name = "z";
  const std::vector<ferry::slot_facts> facts{{.strategy = strategy_kind::mapped, .device = 0, .graph_active = false},
                                             {.strategy = strategy_kind::pinned, .device = 0, .graph_active = false}};
  const auto p = plan_outputs(batch, model_signature{}, outputs, facts);
  ASSERT_EQ(p.steps.size(), 2U);
  EXPECT_EQ(p.steps[0].route, output_route::bind_in_place);
  EXPECT_EQ(p.steps[1].route, output_route::deliver);
  EXPECT_THROW((void)plan_outputs(batch, model_signature{}, outputs, std::span(facts).first(1)),
               ferry::invalid_argument);
}

TEST(ServeOutputRouting, BatchedRequestsAreScatteredOneCopyPerRequestRange) {
  aligned_bytes memory;
  one_request first(2, std::span(memory.data, 128), 0);                    // rows 0-1
  one_request second(1, std::span(memory.data + 1024, 64), std::nullopt);  // row 2
  one_request third(1, {}, std::nullopt);                                  // row 3, in the response
  const auto p = plan({&first, &second, &third}, 8, 8);                    // padded to the engine's 8 rows
  ASSERT_EQ(p.steps.size(), 3U);
  EXPECT_EQ(p.steps[0].route, output_route::deliver);
  EXPECT_EQ(p.steps[0].offset, 0U);
  EXPECT_EQ(p.steps[0].bytes, 128U);
  EXPECT_EQ(p.steps[1].route, output_route::deliver);
  EXPECT_EQ(p.steps[1].offset, 128U);
  EXPECT_EQ(p.steps[1].bytes, 64U);
  EXPECT_EQ(p.steps[2].route, output_route::response);
  EXPECT_EQ(p.steps[2].offset, 192U);
  EXPECT_TRUE(p.host_view_needed[0]) << "the third request reads its rows on the host";
  // A lone request with fewer rows than the engine runs is one range of the padded output: never
  // bound in place, since the engine writes all of its rows.
  one_request lone(2, std::span(memory.data, 128), 0);
  EXPECT_EQ(plan({&lone}, 8, 8).steps[0].route, output_route::deliver);
}

TEST(ServeOutputRouting, AnOutputReadTwiceIsNeverBoundInPlace) {
  aligned_bytes memory;
  one_request twice(1, std::span(memory.data, 64), 0);
  twice.plan.outputs = {0, 0};
  twice.request.outputs.push_back(twice.request.outputs.front());
  std::vector<batch_item> batch{{&twice.request, &twice.plan, &twice.response, {twice.destination, {}}}};
  const std::vector<ferry::tensor_spec> outputs{output_of(1)};
  const auto p = plan_outputs(batch, model_signature{}, outputs, {.strategy = strategy_kind::pinned, .device = 0});
  EXPECT_EQ(p.steps[0].route, output_route::deliver);
  EXPECT_EQ(p.steps[1].route, output_route::response);
}

TEST(ServeOutputRouting, ARangeTooSmallIsRefusedByName) {
  aligned_bytes memory;
  one_request small(1, std::span(memory.data, 32), 0);
  try {
    (void)plan({&small}, 1, 0);
    ADD_FAILURE() << "no exception";
  } catch (const ferry::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("output 'y' needs 64 bytes; its shared-memory range has 32"),
              std::string::npos)
        << e.what();
  }
}

TEST(ServeOutputRouting, ResponsesEchoTheRangeWithTheBytesWrittenAndCarryTheRestFromTheHostView) {
  aligned_bytes memory;
  one_request shm(1, std::span(memory.data, 128), 0);
  one_request body(1, {}, std::nullopt);
  std::vector<batch_item> batch{shm.item(), body.item()};
  model_signature signature;
  signature.max_batch = 2;
  const std::vector<ferry::tensor_spec> outputs{output_of(2)};
  const auto p = plan_outputs(batch, signature, outputs, {.strategy = strategy_kind::pinned, .device = 0});
  std::vector<std::byte> host(128);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<std::byte>(i);
  const std::vector<std::span<const std::byte>> views{host};
  answer_outputs(batch, p, outputs, views, true);
  ASSERT_EQ(shm.response.outputs.size(), 1U);
  ASSERT_TRUE(shm.response.outputs[0].shared_memory.has_value());
  EXPECT_EQ(shm.response.outputs[0].shared_memory->byte_size, 64U);
  EXPECT_TRUE(shm.response.outputs[0].data.empty());
  ASSERT_EQ(body.response.outputs.size(), 1U);
  EXPECT_EQ(body.response.outputs[0].shape, (std::vector<std::int64_t>{1, 64}));
  ASSERT_EQ(body.response.outputs[0].data.size(), 64U);
  EXPECT_EQ(body.response.outputs[0].data[0], std::byte{64});
}

}  // namespace
