// CUPTI's unified-memory counters on a real GPU: a 64 MiB managed buffer written by the CPU and
// read by a kernel migrates host->device on GPU faults; read again by the CPU it migrates back.
// Skips with CUPTI's reason where the platform has no such counters (VMs, MPS, a profiler).
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <string>
#include <thread>
#include <utility>

#include "bench/measure/um_counters.hpp"
#include "ferry/core/error.hpp"

namespace {

using ferry::bench::um_counter_session;
using ferry::bench::um_traffic;

constexpr std::size_t mib = std::size_t{1} << 20;
constexpr std::size_t buffer_bytes = 64 * mib;

__global__ void sum_bytes(const std::uint8_t* data, std::size_t n, unsigned long long* sum) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    local += data[i];
  atomicAdd(sum, local);
}

std::uint8_t pattern(std::size_t i) { return static_cast<std::uint8_t>((i * 131U) ^ (i >> 12)); }

std::string describe(const um_traffic& t) {
  return "HtoD " + std::to_string(t.bytes_host_to_device) + " B, DtoH " + std::to_string(t.bytes_device_to_host) +
         " B, GPU faults " + std::to_string(t.gpu_page_faults) + ", CPU faults " + std::to_string(t.cpu_page_faults);
}

// take() until `enough` holds or about a second has passed, summing. take() force-flushes what
// CUPTI holds; if the driver's events reach CUPTI a little late, this still counts them, and
// says so, rather than failing on timing alone.
template <class Enough>
um_traffic take_until(um_counter_session& session, Enough enough) {
  um_traffic total;
  std::uint64_t dropped = 0;
  for (int attempt = 1;; ++attempt) {
    const auto t = session.take();
    if (!t) {
      ADD_FAILURE() << "take() failed: " << session.reason();
      return total;
    }
    total += *t;
    dropped += session.dropped_records();
    if (enough(total) || attempt == 20) {
      std::cout << "um counters after " << attempt << " take(s): " << describe(total) << ", dropped " << dropped
                << " record(s)\n";
      return total;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

struct managed_bytes {
  std::uint8_t* p = nullptr;
  explicit managed_bytes(std::size_t n) { FERRY_CUDA_TRY(cudaMallocManaged(&p, n)); }
  ~managed_bytes() { FERRY_CUDA_TRY_NOTHROW(cudaFree(p)); }
  managed_bytes(const managed_bytes&) = delete;
  managed_bytes& operator=(const managed_bytes&) = delete;
};

struct device_counter {
  unsigned long long* p = nullptr;
  device_counter() { FERRY_CUDA_TRY(cudaMalloc(&p, sizeof(*p))); }
  ~device_counter() { FERRY_CUDA_TRY_NOTHROW(cudaFree(p)); }
  device_counter(const device_counter&) = delete;
  device_counter& operator=(const device_counter&) = delete;
};

TEST(UmCounters, FaultDrivenMigrationIsCountedBothWays) {
  auto session = um_counter_session::start(0);
  if (!session.available()) GTEST_SKIP() << session.reason();

  managed_bytes data(buffer_bytes);
  device_counter sum;
  FERRY_CUDA_TRY(cudaMemset(sum.p, 0, sizeof(*sum.p)));
  FERRY_CUDA_TRY(cudaDeviceSynchronize());
  ASSERT_TRUE(session.take().has_value()) << session.reason();  // count from here on

  // The CPU writes every byte: the pages come to life in host memory.
  unsigned long long expected = 0;
  for (std::size_t i = 0; i < buffer_bytes; ++i) {
    data.p[i] = pattern(i);
    expected += data.p[i];
  }
  // A kernel reads every byte, with no prefetch and no hints: every page faults over.
  sum_bytes<<<1024, 256>>>(data.p, buffer_bytes, sum.p);
  FERRY_CUDA_CHECK_LAUNCH();
  FERRY_CUDA_TRY(cudaDeviceSynchronize());
  unsigned long long seen_by_gpu = 0;
  FERRY_CUDA_TRY(cudaMemcpy(&seen_by_gpu, sum.p, sizeof(seen_by_gpu), cudaMemcpyDeviceToHost));
  ASSERT_EQ(seen_by_gpu, expected) << "the kernel did not read what the CPU wrote";

  const um_traffic to_gpu = take_until(
      session, [](const um_traffic& t) { return t.bytes_host_to_device >= 60 * mib && t.gpu_page_faults > 0; });
  EXPECT_GE(to_gpu.bytes_host_to_device, 60 * mib) << describe(to_gpu);
  EXPECT_GT(to_gpu.gpu_page_faults, 0U) << describe(to_gpu);

  // The CPU reads every byte again: the pages now live on the GPU and fault back.
  unsigned long long seen_by_cpu = 0;
  for (std::size_t i = 0; i < buffer_bytes; ++i) seen_by_cpu += data.p[i];
  ASSERT_EQ(seen_by_cpu, expected);

  const um_traffic to_cpu = take_until(session, [](const um_traffic& t) { return t.bytes_device_to_host > 0; });
  EXPECT_GT(to_cpu.bytes_device_to_host, 0U) << describe(to_cpu);
}

TEST(UmCounters, OneSessionPerProcessAndMovesKeepIt) {
  auto first = um_counter_session::start(0);
  if (!first.available()) GTEST_SKIP() << first.reason();

  auto second = um_counter_session::start(0);
  EXPECT_FALSE(second.available());
  EXPECT_NE(second.reason().find("another um_counter_session"), std::string::npos) << second.reason();
  EXPECT_FALSE(second.take().has_value());

  auto moved = std::move(first);
  EXPECT_TRUE(moved.available());
  EXPECT_FALSE(first.available());         // NOLINT(bugprone-use-after-move): checking the moved-from state
  EXPECT_FALSE(first.take().has_value());  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(moved.take().has_value()) << moved.reason();

  { const auto released = std::move(moved); }  // its destructor gives the slot back
  auto third = um_counter_session::start(0);
  EXPECT_TRUE(third.available()) << third.reason();
}

}  // namespace
