// The session's one rule for using caller memory in place of a slot's buffer (inputs read from
// it, outputs written into it), under every strategy: pure, so it is tested without a GPU.
#include <gtest/gtest.h>

#include <string>

#include "ferry/memory/buffer.hpp"
#include "ferry/session/caller_memory.hpp"

namespace {

using ferry::caller_memory;
using ferry::caller_memory_kind;
using ferry::strategy_kind;

const ferry::tensor_spec spec{"x", ferry::dtype::u8, {1024}};

caller_memory memory(caller_memory_kind kind, std::uintptr_t address = 4096, std::size_t bytes = 1024, int device = 0) {
  return {.kind = kind, .device = kind == caller_memory_kind::device ? device : -1, .address = address, .bytes = bytes};
}

ferry::slot_facts on(strategy_kind strategy, bool graph = false) {
  return {.strategy = strategy, .device = 0, .graph_active = graph};
}

TEST(CallerMemory, DeviceMemoryOnTheSlotsGpuIsUsedInPlaceUnderEveryStrategy) {
  for (const auto s : ferry::all_strategies) {
    EXPECT_FALSE(ferry::caller_input_refusal(spec, on(s), memory(caller_memory_kind::device))) << ferry::to_string(s);
    EXPECT_FALSE(ferry::caller_output_refusal(spec, on(s), memory(caller_memory_kind::device))) << ferry::to_string(s);
  }
}

TEST(CallerMemory, RefusalsSayWhatIsWrong) {
  const auto other_gpu =
      ferry::caller_output_refusal(spec, on(strategy_kind::pinned), memory(caller_memory_kind::device, 4096, 1024, 1));
  ASSERT_TRUE(other_gpu);
  EXPECT_FALSE(other_gpu->unsupported);
  EXPECT_NE(other_gpu->reason.find("on GPU 1, this slot runs on GPU 0"), std::string::npos) << other_gpu->reason;
  const auto size =
      ferry::caller_input_refusal(spec, on(strategy_kind::pinned), memory(caller_memory_kind::device, 4096, 2048));
  ASSERT_TRUE(size);
  EXPECT_NE(size->reason.find("caller memory is 2048 bytes, the tensor is 1024"), std::string::npos) << size->reason;
  const auto misaligned =
      ferry::caller_output_refusal(spec, on(strategy_kind::device), memory(caller_memory_kind::device, 4096 + 16));
  ASSERT_TRUE(misaligned);
  EXPECT_NE(misaligned->reason.find("256-byte aligned"), std::string::npos) << misaligned->reason;
  const auto graph =
      ferry::caller_input_refusal(spec, on(strategy_kind::pinned, true), memory(caller_memory_kind::device));
  ASSERT_TRUE(graph);
  EXPECT_TRUE(graph->unsupported);
  const auto pageable =
      ferry::caller_input_refusal(spec, on(strategy_kind::pinned), memory(caller_memory_kind::pageable_host));
  ASSERT_TRUE(pageable);
  EXPECT_NE(pageable->reason.find("staging copy"), std::string::npos) << pageable->reason;
}

TEST(CallerMemory, RegisteredHostInputsAreDmaedUnderCopiesBoundUnderZeroCopyNeverUnderManaged) {
  const auto registered = memory(caller_memory_kind::registered_host, 4096 + 16);          // misaligned
  EXPECT_FALSE(ferry::caller_input_refusal(spec, on(strategy_kind::pinned), registered));  // a DMA reads any address
  EXPECT_FALSE(ferry::caller_input_refusal(spec, on(strategy_kind::device), registered));
  EXPECT_TRUE(ferry::caller_input_refusal(spec, on(strategy_kind::mapped), registered));  // bound: must be aligned
  EXPECT_FALSE(
      ferry::caller_input_refusal(spec, on(strategy_kind::mapped), memory(caller_memory_kind::registered_host)));
  const auto managed = ferry::caller_input_refusal(spec, on(strategy_kind::managed_prefetch),
                                                   memory(caller_memory_kind::registered_host));
  ASSERT_TRUE(managed);
  EXPECT_TRUE(managed->unsupported);
}

TEST(CallerMemory, RegisteredHostOutputsAreBoundOnlyUnderZeroCopyStrategies) {
  const auto registered = memory(caller_memory_kind::registered_host);
  EXPECT_FALSE(ferry::caller_output_refusal(spec, on(strategy_kind::mapped), registered));
  EXPECT_FALSE(ferry::caller_output_refusal(spec, on(strategy_kind::registered_mapped), registered));
  for (const auto s : {strategy_kind::pinned, strategy_kind::staged, strategy_kind::device, strategy_kind::managed}) {
    const auto refusal = ferry::caller_output_refusal(spec, on(s), registered);
    ASSERT_TRUE(refusal) << ferry::to_string(s);
    EXPECT_TRUE(refusal->unsupported);
    EXPECT_NE(refusal->reason.find("delivered to by a copy"), std::string::npos) << refusal->reason;
  }
}

}  // namespace
