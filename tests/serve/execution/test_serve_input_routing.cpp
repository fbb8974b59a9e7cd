// Where each input of a batch goes on a GPU (in place or gathered, on the host or the device),
// the GPU check for CUDA regions, and the range check every shared-memory tensor passes: pure
// logic, tested without a GPU (device ranges here are host bytes that are never read).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ferry/core/error.hpp"
#include "ferry/memory/buffer.hpp"
#include "ferry/session/caller_memory.hpp"
#include "serve/execution/batch_io.hpp"
#include "serve/execution/input_routing.hpp"
#include "serve/shm/cuda_shm_registry.hpp"
#include "serve/shm/shm_range.hpp"
#include "serve/shm/shm_registry.hpp"
#include "serve/shm/shm_resolution.hpp"
#include "serve/vocabulary/request_error.hpp"

namespace {

using namespace ferry::serve;
using ferry::strategy_kind;

// 256-byte aligned backing memory for fake ranges.
struct aligned_bytes {
  alignas(ferry::device_alignment) std::byte data[4096]{};
};

// One request with a single input of `bytes` bytes at `data`, optionally in a (fake) region.
struct one_request {
  infer_request request;
  request_plan plan;
  infer_response response;
  one_request(std::byte* data, std::size_t bytes, bool shm, std::optional<int> cuda_device) {
    input_tensor in{
        "x",          ferry::dtype::u8, {static_cast<std::int64_t>(bytes)}, std::span<const std::byte>(data, bytes),
        std::nullopt, cuda_device};
    if (shm || cuda_device) in.shared_memory = shm_ref{"r", 0, bytes};
    request.inputs.push_back(std::move(in));
  }
  [[nodiscard]] batch_item item() { return {&request, &plan, &response, {}}; }
};

input_route route(std::vector<one_request*> requests, std::size_t tensor_bytes,
                  strategy_kind strategy = strategy_kind::pinned) {
  std::vector<batch_item> batch;
  for (auto* r : requests) batch.push_back(r->item());
  const ferry::tensor_spec spec{"x", ferry::dtype::u8, {static_cast<std::int64_t>(tensor_bytes)}};
  return route_input(batch, 0, spec, ferry::slot_facts{.strategy = strategy, .device = 0, .graph_active = false});
}

TEST(ServeInputRouting, LoneExactSystemShmInputIsReadInPlaceElseGatheredByTheSlotsCopies) {
  aligned_bytes memory;
  one_request shm(memory.data, 64, true, std::nullopt);
  EXPECT_EQ(route({&shm}, 64), input_route::caller_host);
  EXPECT_EQ(route({&shm}, 64, strategy_kind::mapped), input_route::caller_host);
  // Managed strategies read managed pages: the range is copied into device memory instead.
  EXPECT_EQ(route({&shm}, 64, strategy_kind::managed_prefetch), input_route::gather_on_device);
  EXPECT_EQ(route({&shm}, 128), input_route::gather_on_device);  // padded: one DMA + zero-fill
  one_request body(memory.data, 64, false, std::nullopt);
  EXPECT_EQ(route({&body}, 64), input_route::gather_on_host);  // bytes in the request body
  EXPECT_EQ(route({&body, &body}, 128), input_route::gather_on_host);
  EXPECT_EQ(route({&shm, &body}, 128), input_route::gather_on_device);  // merged: one copy per item
}

TEST(ServeInputRouting, MisalignedSystemShmInputIsGatheredUnderZeroCopyButDmaedUnderCopies) {
  aligned_bytes memory;
  one_request misaligned(memory.data + 16, 64, true, std::nullopt);
  // Copy strategies DMA from any address; zero-copy ones would bind the engine to it.
  EXPECT_EQ(route({&misaligned}, 64, strategy_kind::pinned), input_route::caller_host);
  EXPECT_EQ(route({&misaligned}, 64, strategy_kind::mapped), input_route::gather_on_device);
  EXPECT_EQ(route({&misaligned}, 64, strategy_kind::registered_mapped), input_route::gather_on_device);
}

TEST(ServeInputRouting, AskingTheSessionsRuleGivesTheSameAnswerAndWhy) {
  aligned_bytes memory;
  one_request misaligned(memory.data + 16, 64, true, 0);
  const ferry::tensor_spec spec{"x", ferry::dtype::u8, {64}};
  const auto refusal = ferry::caller_input_refusal(spec, {.strategy = strategy_kind::pinned, .device = 0},
                                                   input_memory(misaligned.item(), 0));
  ASSERT_TRUE(refusal.has_value());
  EXPECT_FALSE(refusal->unsupported);
  EXPECT_NE(refusal->reason.find("256-byte aligned"), std::string::npos) << refusal->reason;
  one_request managed(memory.data, 64, true, std::nullopt);
  const auto managed_refusal = ferry::caller_input_refusal(spec, {.strategy = strategy_kind::managed, .device = 0},
                                                           input_memory(managed.item(), 0));
  ASSERT_TRUE(managed_refusal.has_value());
  EXPECT_TRUE(managed_refusal->unsupported);
  one_request graph(memory.data, 64, true, 0);
  const auto graph_refusal = ferry::caller_input_refusal(
      spec, {.strategy = strategy_kind::pinned, .device = 0, .graph_active = true}, input_memory(graph.item(), 0));
  ASSERT_TRUE(graph_refusal.has_value());
  EXPECT_NE(graph_refusal->reason.find("captured CUDA graph"), std::string::npos);
}

TEST(ServeInputRouting, LoneExactAlignedCudaShmInputIsBoundInPlaceUnderEveryStrategy) {
  aligned_bytes memory;
  one_request cuda(memory.data, 64, true, 0);
  for (const auto strategy : ferry::all_strategies)
    EXPECT_EQ(route({&cuda}, 64, strategy), input_route::caller_device) << ferry::to_string(strategy);
}

TEST(ServeInputRouting, CudaShmInputThatIsMergedPaddedOrMisalignedIsGatheredOnTheDevice) {
  aligned_bytes memory;
  one_request cuda(memory.data, 64, true, 0);
  one_request body(memory.data + 1024, 64, false, std::nullopt);
  EXPECT_EQ(route({&cuda}, 128), input_route::gather_on_device);         // padded rows
  EXPECT_EQ(route({&cuda, &body}, 128), input_route::gather_on_device);  // merged, CUDA first
  EXPECT_EQ(route({&body, &cuda}, 128), input_route::gather_on_device);  // merged, CUDA second
  one_request misaligned(memory.data + 16, 64, true, 0);
  EXPECT_EQ(route({&misaligned}, 64), input_route::gather_on_device);
}

TEST(ServeInputRouting, CudaInputsMustBeOnTheInstancesGpu) {
  aligned_bytes memory;
  one_request on_one(memory.data, 64, true, 1);
  one_request on_host(memory.data, 64, true, std::nullopt);
  std::vector<batch_item> batch{on_host.item(), on_one.item()};
  EXPECT_NO_THROW(check_cuda_inputs_on(batch, 1));
  try {
    check_cuda_inputs_on(batch, 0);
    ADD_FAILURE() << "no exception";
  } catch (const ferry::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("input 'x' is in CUDA shared-memory region 'r' on GPU 1"), std::string::npos) << message;
    EXPECT_NE(message.find("runs on GPU 0"), std::string::npos) << message;
  }
}

TEST(ServeInputRouting, HostGatherRefusesDeviceMemoryByName) {
  aligned_bytes memory;
  one_request cuda(memory.data, 64, true, 0);
  std::vector<batch_item> batch{cuda.item()};
  std::vector<std::byte> destination(64);
  try {
    gather_input(batch, 0, destination, gathered_for::device);
    ADD_FAILURE() << "no exception";
  } catch (const ferry::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("input 'x' is in GPU 0's memory"), std::string::npos) << e.what();
  }
}

TEST(ServeShmRange, ChecksEveryRangeWithoutOverflow) {
  aligned_bytes memory;
  const std::span<std::byte> region(memory.data, 1000);
  const auto range = checked_range({"r", 100, 24}, region, "input 'x'");
  EXPECT_EQ(range.data(), memory.data + 100);
  EXPECT_EQ(range.size(), 24U);
  EXPECT_EQ(checked_range({"r", 1000, 0}, region, "input 'x'").size(), 0U);
  for (const shm_ref& bad :
       {shm_ref{"r", 990, 11}, shm_ref{"r", 1001, 0}, shm_ref{"r", SIZE_MAX, 2}, shm_ref{"r", 2, SIZE_MAX}}) {
    try {
      (void)checked_range(bad, region, "output 'y'");
      ADD_FAILURE() << "no exception for offset " << bad.offset;
    } catch (const request_error& e) {
      EXPECT_EQ(e.status(), error_status::bad_request);
      EXPECT_NE(std::string(e.what()).find("output 'y': shared-memory range"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("outside region 'r' of 1000 bytes"), std::string::npos) << e.what();
    }
  }
}

TEST(ServeShmResolution, RegionsRegisteredNowhereAreNotFoundWithACudaRegistryToo) {
  const shm_registry system(cuda_registration::off);
  const cuda_shm_registry cuda(0, "no CUDA device: test");
  infer_request request;
  request.inputs.push_back({"x", ferry::dtype::u8, {4}, {}, shm_ref{"nowhere", 0, 4}});
  std::vector<output_destination> outputs;
  std::vector<std::shared_ptr<const void>> pins;
  try {
    resolve_shared_memory(request, system, &cuda, outputs, pins);
    ADD_FAILURE() << "no exception";
  } catch (const request_error& e) {
    EXPECT_EQ(e.status(), error_status::not_found);
    EXPECT_NE(std::string(e.what()).find("input 'x': shared-memory region 'nowhere' is not registered"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(pins.empty());
}

}  // namespace
