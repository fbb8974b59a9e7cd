// The strategy contract, on the GPU, instantiated for every strategy (docs/ARCHITECTURE.md §2):
// the CPU writes a fresh pattern into the host view, to_device, a kernel checks every element and
// writes a transform of it, to_host (and finish_to_host), the CPU checks every element. Repeated, so managed pages
// really travel both ways, at sizes from one byte to 64 MiB, odd sizes included.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/core/error.hpp"
#include "ferry/core/stream.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/memory/buffer.hpp"
#include "support/strategy_test_name.hpp"

namespace {

using ferry::strategy_kind;

// What the CPU writes on round `round` and what the kernel turns it into.
__host__ __device__ std::uint8_t written(std::size_t i, unsigned round) {
  return static_cast<std::uint8_t>((i * 2654435761U) >> 13 ^ (round * 0x9Du));
}
__host__ __device__ std::uint8_t transformed(std::uint8_t v) { return static_cast<std::uint8_t>(v * 5U + 3U); }

__global__ void check_and_transform(std::uint8_t* data, std::size_t n, unsigned round, unsigned long long* mismatches) {
  unsigned long long bad = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const std::uint8_t v = data[i];
    if (v != written(i, round)) ++bad;
    data[i] = transformed(v);
  }
  if (bad != 0) atomicAdd(mismatches, bad);
}

class StrategyContract : public ::testing::TestWithParam<strategy_kind> {
 protected:
  void SetUp() override {
    caps_ = ferry::query_device(0);
    if (auto reason = ferry::unavailable_reason(GetParam(), caps_))
      GTEST_SKIP() << "not available on this GPU: " << *reason;
    FERRY_CUDA_TRY(cudaMallocHost(&mismatches_, sizeof(*mismatches_)));
  }
  void TearDown() override {
    if (mismatches_ != nullptr) FERRY_CUDA_TRY_NOTHROW(cudaFreeHost(mismatches_));
  }

  // Runs `rounds` fill -> to_device -> kernel -> to_host -> check cycles on one buffer.
  void round_trip(std::size_t bytes, unsigned rounds) {
    auto buffer = ferry::io_buffer::allocate(GetParam(), {.bytes = bytes}, caps_);
    ASSERT_EQ(buffer.bytes(), bytes);
    ASSERT_EQ(buffer.host().size(), bytes);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(buffer.device_address()) % ferry::device_alignment, 0U);
    const bool resident = ferry::properties(GetParam()).path == ferry::data_path::resident;
    ferry::stream stream;
    for (unsigned round = 0; round < rounds; ++round) {
      auto host = buffer.host();
      for (std::size_t i = 0; i < bytes; ++i) host[i] = std::byte{written(i, round)};
      *mismatches_ = 0;
      // The device strategy's stream operations move nothing by definition; its data is put
      // on the device by the explicit untimed calls.
      if (resident)
        buffer.upload_blocking(stream);
      else
        buffer.to_device(stream);
      const int blocks = static_cast<int>(std::min<std::size_t>((bytes + 255) / 256, 1024));
      check_and_transform<<<blocks, 256, 0, stream.get()>>>(static_cast<std::uint8_t*>(buffer.device_address()), bytes,
                                                            round, mismatches_);
      FERRY_CUDA_CHECK_LAUNCH();
      if (resident)
        buffer.download_blocking(stream);
      else
        buffer.to_host(stream);
      stream.synchronize_blocking();
      buffer.finish_to_host();  // staged: staging -> host view, once the stream is done
      ASSERT_EQ(*mismatches_, 0U) << "the device saw stale or wrong input, round " << round;
      std::size_t wrong = 0;
      std::size_t first_wrong = bytes;
      for (std::size_t i = 0; i < bytes; ++i) {
        if (host[i] != std::byte{transformed(written(i, round))}) {
          if (wrong++ == 0) first_wrong = i;
        }
      }
      ASSERT_EQ(wrong, 0U) << "host view wrong after to_host in round " << round << ", first at byte " << first_wrong;
    }
  }

  ferry::device_caps caps_;
  unsigned long long* mismatches_ = nullptr;
};

TEST_P(StrategyContract, OneByte) { round_trip(1, 3); }
TEST_P(StrategyContract, OnePage) { round_trip(4096, 3); }
TEST_P(StrategyContract, OddSize) { round_trip(12345, 3); }
TEST_P(StrategyContract, OddMegabytes) { round_trip((std::size_t{5} << 20) + 7, 3); }
TEST_P(StrategyContract, SixtyFourMegabytes) { round_trip(std::size_t{64} << 20, 3); }

TEST_P(StrategyContract, DirectionLimitsWhatMoves) {
  // An input buffer's to_host must not overwrite what the CPU wrote (copy strategies skip it).
  auto buffer = ferry::io_buffer::allocate(GetParam(), {.bytes = 8192, .dir = ferry::direction::input}, caps_);
  ferry::stream stream;
  auto host = buffer.host();
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = std::byte{written(i, 7)};
  buffer.to_device(stream);
  buffer.to_host(stream);
  stream.synchronize_blocking();
  buffer.finish_to_host();
  for (std::size_t i = 0; i < host.size(); ++i) ASSERT_EQ(host[i], std::byte{written(i, 7)});
}

__global__ void count_unlike(const std::uint8_t* data, std::size_t n, unsigned round, unsigned long long* mismatches) {
  unsigned long long bad = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    if (data[i] != written(i, round)) ++bad;
  if (bad != 0) atomicAdd(mismatches, bad);
}

TEST_P(StrategyContract, PrefixTransfersMoveOnlyTheirBytes) {
  // A session running a smaller batch moves the rows it uses, a prefix: what the prefix holds
  // arrives, and a copy strategy leaves the rest of the other side as it was.
  constexpr std::size_t bytes = 3 * 4096 + 100;
  constexpr std::size_t prefix = 4096 + 17;
  auto buffer = ferry::io_buffer::allocate(GetParam(), {.bytes = bytes}, caps_);
  const bool copies = ferry::properties(GetParam()).path == ferry::data_path::copy;
  const bool resident = ferry::properties(GetParam()).path == ferry::data_path::resident;
  ferry::stream stream;
  auto host = buffer.host();
  for (std::size_t i = 0; i < bytes; ++i) host[i] = std::byte{written(i, 1)};
  buffer.upload_blocking(stream);
  for (std::size_t i = 0; i < bytes; ++i) host[i] = std::byte{written(i, 2)};
  if (resident)
    buffer.upload_blocking(stream, prefix);
  else
    buffer.to_device(stream, prefix);
  *mismatches_ = 0;
  auto* device = static_cast<std::uint8_t*>(buffer.device_address());
  count_unlike<<<4, 256, 0, stream.get()>>>(device, prefix, 2, mismatches_);
  FERRY_CUDA_CHECK_LAUNCH();
  stream.synchronize_blocking();
  EXPECT_EQ(*mismatches_, 0U) << "the prefix did not arrive";
  if (copies) {
    std::vector<std::uint8_t> tail(bytes - prefix);
    FERRY_CUDA_TRY(cudaMemcpy(tail.data(), device + prefix, tail.size(), cudaMemcpyDefault));
    for (std::size_t i = 0; i < tail.size(); ++i)
      ASSERT_EQ(tail[i], written(prefix + i, 1)) << "a prefix transfer wrote byte " << prefix + i;
  }
  EXPECT_THROW(buffer.to_device(stream, bytes + 1), ferry::invalid_argument);
  EXPECT_THROW(buffer.to_host(stream, bytes + 1), ferry::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(EveryStrategy, StrategyContract, ::testing::ValuesIn(ferry::all_strategies),
                         strategy_test_name);

// ---- refusals that need the real driver ----

TEST(StrategyRefusal, UnavailableStrategiesAreRefusedWithTheirReason) {
  const auto caps = ferry::query_device(0);
  for (auto k : ferry::all_strategies) {
    const auto reason = ferry::unavailable_reason(k, caps);
    if (!reason) continue;
    try {
      (void)ferry::io_buffer::allocate(k, {.bytes = 4096}, caps);
      FAIL() << ferry::to_string(k) << " should have been refused";
    } catch (const ferry::unsupported& e) {
      EXPECT_NE(std::string(e.what()).find(*reason), std::string::npos) << e.what();
    }
  }
}

TEST(StrategyRefusal, ManagedRequestBeyondFreeMemoryIsRefusedWithoutAllocating) {
  const auto caps = ferry::query_device(0);
  if (ferry::unavailable_reason(strategy_kind::managed, caps)) GTEST_SKIP() << "no managed memory";
  const std::size_t too_much = ferry::query_free_memory(0) + (std::size_t{1} << 30);
  try {
    (void)ferry::io_buffer::allocate(strategy_kind::managed_prefetch, {.bytes = too_much}, caps);
    FAIL() << "a managed request larger than free memory must be refused";
  } catch (const ferry::unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit"), std::string::npos) << e.what();
  }
}

TEST(Registered, WrapsCallerMemoryAndMovesItsData) {
  const auto caps = ferry::query_device(0);
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t bytes = 64 * page;
  void* raw = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(raw, MAP_FAILED);
  std::span<std::byte> caller(static_cast<std::byte*>(raw), bytes);
  for (auto k : {strategy_kind::registered, strategy_kind::registered_mapped}) {
    auto buffer = ferry::io_buffer::wrap_registered(k, caller, {.bytes = bytes}, caps);
    EXPECT_EQ(buffer.host().data(), caller.data()) << "the host view must be the caller's memory";
    ferry::stream stream;
    for (std::size_t i = 0; i < bytes; ++i) caller[i] = std::byte{written(i, 1)};
    unsigned long long* mismatches = nullptr;
    FERRY_CUDA_TRY(cudaMallocHost(&mismatches, sizeof(*mismatches)));
    *mismatches = 0;
    buffer.to_device(stream);
    check_and_transform<<<64, 256, 0, stream.get()>>>(static_cast<std::uint8_t*>(buffer.device_address()), bytes, 1,
                                                      mismatches);
    FERRY_CUDA_CHECK_LAUNCH();
    buffer.to_host(stream);
    stream.synchronize_blocking();
    buffer.finish_to_host();
    EXPECT_EQ(*mismatches, 0U);
    FERRY_CUDA_TRY(cudaFreeHost(mismatches));
    for (std::size_t i = 0; i < bytes; ++i)
      ASSERT_EQ(caller[i], std::byte{transformed(written(i, 1))}) << ferry::to_string(k);
  }
  munmap(raw, bytes);
}

TEST(Registered, ReadOnlyMemoryIsRefusedWithTheCudaError) {
  const auto caps = ferry::query_device(0);
  const std::size_t bytes = 16 * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* raw = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(raw, MAP_FAILED);
  std::span<std::byte> caller(static_cast<std::byte*>(raw), bytes);
  try {
    (void)ferry::io_buffer::wrap_registered(strategy_kind::registered, caller, {.bytes = bytes}, caps);
    ADD_FAILURE() << "registering read-only memory must be refused";
  } catch (const ferry::unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("cannot register"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cudaError"), std::string::npos) << e.what();
  }
  munmap(raw, bytes);
}

TEST(Registered, AlreadyRegisteredMemoryIsRefused) {
  const auto caps = ferry::query_device(0);
  const std::size_t bytes = 16 * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<std::byte> memory(bytes);
  auto first = ferry::io_buffer::wrap_registered(strategy_kind::registered, memory, {.bytes = bytes}, caps);
  EXPECT_THROW((void)ferry::io_buffer::wrap_registered(strategy_kind::registered, memory, {.bytes = bytes}, caps),
               ferry::unsupported);
}

TEST(Registered, MisalignedCallerMemoryCannotBeBoundInPlace) {
  const auto caps = ferry::query_device(0);
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* raw = mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(raw, MAP_FAILED);
  std::span<std::byte> caller(static_cast<std::byte*>(raw) + 16, 2 * page);
  try {
    (void)ferry::io_buffer::wrap_registered(strategy_kind::registered_mapped, caller, {.bytes = caller.size()}, caps);
    ADD_FAILURE() << "a device address 16 bytes past a page boundary must be refused";
  } catch (const ferry::unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("256-byte aligned"), std::string::npos) << e.what();
  }
  // The copying variant has its own aligned device memory, so the same memory is fine there.
  auto copy = ferry::io_buffer::wrap_registered(strategy_kind::registered, caller, {.bytes = caller.size()}, caps);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(copy.device_address()) % ferry::device_alignment, 0U);
  munmap(raw, 4 * page);
}

}  // namespace
