// Opening device memory another process exported. CUDA refuses to open an IPC handle in the
// process that exported it, so the test re-runs this very test binary as a child (filtered to
// this test, the handle in its environment): the parent exports and fills an allocation, the
// child opens it with core::ipc_memory, checks the bytes and that its current device is back,
// and reports through its exit status.
#include <gtest/gtest.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/device_memory.hpp"
#include "core/ipc_memory.hpp"
#include "core/scoped_device.hpp"
#include "ferry/device/device_caps.hpp"

extern char** environ;  // NOLINT: posix_spawn passes it on

namespace {

constexpr const char* handle_variable = "FERRY_TEST_IPC_HANDLE";
constexpr std::size_t bytes = 1 << 20;
constexpr unsigned char pattern = 0x5a;

std::string to_hex(const cudaIpcMemHandle_t& handle) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string hex;
  for (const char c : handle.reserved) {
    const auto b = static_cast<unsigned char>(c);
    hex += digits[b >> 4];
    hex += digits[b & 0xf];
  }
  return hex;
}

cudaIpcMemHandle_t from_hex(const std::string& hex) {
  cudaIpcMemHandle_t handle{};
  for (std::size_t i = 0; i < sizeof handle.reserved && 2 * i + 1 < hex.size(); ++i)
    handle.reserved[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return handle;
}

// The child's side: open on the last device while device 0 is current, so restoring shows
// wherever there are two GPUs.
void open_in_child(const std::string& hex) {
  const int device = ferry::cuda_device_count() - 1;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  std::vector<unsigned char> host(bytes);
  {
    const ferry::core::ipc_memory opened(from_hex(hex), device);
    ASSERT_FALSE(opened.empty());
    EXPECT_EQ(opened.device(), device);
    int current = -1;
    ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
    EXPECT_EQ(current, 0) << "opening left the handle's device current";
    ASSERT_EQ(cudaMemcpy(host.data(), opened.get(), bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  }
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0) << "closing left the handle's device current";
  for (const unsigned char b : host) ASSERT_EQ(b, pattern);
}

TEST(IpcMemory, OpensMemoryAnotherProcessExported) {
  if (const char* hex = std::getenv(handle_variable)) {
    open_in_child(hex);
    return;
  }
  const int device = ferry::cuda_device_count() - 1;
  const ferry::core::scoped_device on_device(device);
  const ferry::core::device_memory exported = ferry::core::allocate_device(bytes);
  ASSERT_EQ(cudaMemset(exported.get(), pattern, bytes), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaIpcMemHandle_t handle{};
  ASSERT_EQ(cudaIpcGetMemHandle(&handle, exported.get()), cudaSuccess);

  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) env_text.emplace_back(*e);
  env_text.push_back(std::string(handle_variable) + "=" + to_hex(handle));
  std::vector<char*> env;
  for (auto& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  std::string self = "/proc/self/exe";
  std::string filter = "--gtest_filter=IpcMemory.OpensMemoryAnotherProcessExported";
  char* argv[] = {self.data(), filter.data(), nullptr};
  pid_t child = 0;
  ASSERT_EQ(posix_spawn(&child, self.c_str(), nullptr, nullptr, argv, env.data()), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child did not exit normally";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child failed to open or read the exported memory (its output is above)";
}

// The failure path on another device: the device that was current stays current.
TEST(IpcMemory, ARefusedHandleLeavesTheCurrentDevice) {
  const int device = ferry::cuda_device_count() - 1;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_THROW((void)ferry::core::ipc_memory(cudaIpcMemHandle_t{}, device), ferry::core::ipc_open_error);
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0);
}

}  // namespace
