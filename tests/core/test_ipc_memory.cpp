// The owner of an opened CUDA IPC handle, as far as it shows without a second process: its empty
// state, and that a handle CUDA cannot open is refused with a typed error, leaving the current
// device as it was. tests/core/gpu/test_ipc_memory.cpp opens a real handle from a child process.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <string>
#include <utility>

#include "core/ipc_memory.hpp"
#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"

namespace {

TEST(IpcMemory, AnEmptyOneOwnsNothingAndMovesAsEmpty) {
  ferry::core::ipc_memory empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.get(), nullptr);
  EXPECT_EQ(empty.device(), -1);
  ferry::core::ipc_memory moved(std::move(empty));
  EXPECT_TRUE(moved.empty());
  EXPECT_TRUE(empty.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is the point
  ferry::core::ipc_memory assigned;
  assigned = std::move(moved);
  EXPECT_TRUE(assigned.empty());
  EXPECT_EQ(assigned.device(), -1);
}

// An all-zero handle names no exported allocation. Without a GPU the device switch already fails,
// and says which call did; with one, CUDA refuses the handle and the device stays current.
TEST(IpcMemory, AHandleCudaCannotOpenIsRefusedAndTheDeviceStays) {
  const bool has_device = ferry::cuda_device_count() > 0;
  int before = 0;
  if (has_device) ASSERT_EQ(cudaGetDevice(&before), cudaSuccess);
  const cudaIpcMemHandle_t zero{};
  try {
    const ferry::core::ipc_memory opened(zero, before);
    FAIL() << "an all-zero IPC handle was opened";
  } catch (const ferry::core::ipc_open_error& e) {
    EXPECT_TRUE(has_device) << e.what();
    EXPECT_EQ(e.call(), "cudaIpcOpenMemHandle");
    EXPECT_NE(e.code(), cudaSuccess);
  } catch (const ferry::cuda_error& e) {
    EXPECT_FALSE(has_device) << "with a GPU the refusal is an ipc_open_error: " << e.what();
    EXPECT_NE(std::string(e.what()).find("cudaGetDevice"), std::string::npos) << e.what();
  }
  if (has_device) {
    int after = -1;
    ASSERT_EQ(cudaGetDevice(&after), cudaSuccess);
    EXPECT_EQ(after, before);
  }
}

}  // namespace
