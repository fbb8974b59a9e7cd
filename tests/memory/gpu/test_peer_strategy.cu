// peer on the GPU: the tensor lives in another GPU's memory and the engine's GPU reads and writes
// it over peer access. Needs two GPUs with peer access between them; on one GPU (or where peer
// access is not possible) each test skips with the strategy's own reason, which is what `ferry
// info` and `--strategy all` show there.
#include <gtest/gtest.h>

#include <cstdint>

#include "ferry/core/error.hpp"
#include "ferry/core/stream.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/memory/buffer.hpp"

namespace {

__global__ void add_one(std::uint8_t* data, std::size_t n, unsigned long long* unexpected) {
  unsigned long long bad = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    if (data[i] != static_cast<std::uint8_t>(i * 7)) ++bad;
    data[i] = static_cast<std::uint8_t>(i * 7 + 1);
  }
  if (bad != 0) atomicAdd(unexpected, bad);
}

class PeerStrategy : public ::testing::Test {
 protected:
  void SetUp() override {
    caps_ = ferry::query_device(0);
    if (auto reason = ferry::unavailable_reason(peer_, caps_)) GTEST_SKIP() << "peer is not available: " << *reason;
  }

  ferry::strategy_kind peer_ = ferry::parse_strategy("peer");
  ferry::device_caps caps_;
};

TEST_F(PeerStrategy, TheTensorLivesInAnotherGpusMemory) {
  auto buffer = ferry::io_buffer::allocate(peer_, {.bytes = 1 << 20}, caps_);
  cudaPointerAttributes attributes{};
  FERRY_CUDA_TRY(cudaPointerGetAttributes(&attributes, buffer.device_address()));
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);
  EXPECT_NE(attributes.device, caps_.ordinal) << "the data must be on a peer, not on the engine's GPU";
  EXPECT_EQ(attributes.device, caps_.peer_ordinals.front());
  EXPECT_EQ(buffer.device_ordinal(), caps_.ordinal) << "the buffer belongs to the GPU that reads it";
}

TEST_F(PeerStrategy, AKernelOnThisGpuReadsAndWritesItOverPeerAccess) {
  constexpr std::size_t bytes = (std::size_t{3} << 20) + 5;
  auto buffer = ferry::io_buffer::allocate(peer_, {.bytes = bytes}, caps_);
  auto host = buffer.host();
  for (std::size_t i = 0; i < bytes; ++i) host[i] = std::byte{static_cast<std::uint8_t>(i * 7)};
  FERRY_CUDA_TRY(cudaSetDevice(caps_.ordinal));
  ferry::stream stream;
  unsigned long long* unexpected = nullptr;
  FERRY_CUDA_TRY(cudaMallocHost(&unexpected, sizeof(*unexpected)));
  *unexpected = 0;
  buffer.upload_blocking(stream);
  add_one<<<64, 256, 0, stream.get()>>>(static_cast<std::uint8_t*>(buffer.device_address()), bytes, unexpected);
  FERRY_CUDA_CHECK_LAUNCH();
  buffer.download_blocking(stream);
  EXPECT_EQ(*unexpected, 0U) << "the kernel read other bytes than the host wrote";
  FERRY_CUDA_TRY(cudaFreeHost(unexpected));
  for (std::size_t i = 0; i < bytes; ++i)
    ASSERT_EQ(host[i], std::byte{static_cast<std::uint8_t>(i * 7 + 1)}) << "byte " << i;
}

// On a machine of one GPU the strategy is refused by name and reason, never replaced.
TEST(PeerRefusal, OneGpuRefusesItWithTheReason) {
  if (ferry::cuda_device_count() != 1) GTEST_SKIP() << "this machine has more than one GPU";
  const auto caps = ferry::query_device(0);
  EXPECT_EQ(caps.device_count, 1);
  EXPECT_TRUE(caps.peer_ordinals.empty());
  try {
    (void)ferry::io_buffer::allocate(ferry::parse_strategy("peer"), {.bytes = 4096}, caps);
    FAIL() << "peer must be refused on one GPU";
  } catch (const ferry::unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("this machine has one GPU"), std::string::npos) << e.what();
  }
}

}  // namespace
