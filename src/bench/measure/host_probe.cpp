#include "bench/measure/host_probe.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

#include <cuda_runtime_api.h>

namespace ferry::bench {
namespace {

// 20,000 steps of a 64-bit LCG and an xor-shift, each depending on the last: no vectorising,
// no memory traffic, the same instructions every time.
std::uint64_t fixed_work(std::uint64_t x) noexcept {
  for (int i = 0; i < 20'000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    x ^= x >> 29;
  }
  return x;
}

}  // namespace

double time_host_probe_us() noexcept {
  static volatile std::uint64_t sink = 1;
  double best = 1e300;
  for (int round = 0; round < 3; ++round) {
    const auto begin = std::chrono::steady_clock::now();
    sink = fixed_work(sink);
    best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - begin).count());
  }
  return best;
}

double time_cuda_probe_us() noexcept {
  // One stream and event per thread and device, made on first use and kept: making them is the
  // driver's slow path, not what the probe measures.
  struct handles {
    int device = -1;
    cudaStream_t stream = nullptr;
    cudaEvent_t event = nullptr;
  };
  thread_local handles h;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 0;
  if (h.device != device) {
    if (cudaStreamCreateWithFlags(&h.stream, cudaStreamNonBlocking) != cudaSuccess ||
        cudaEventCreateWithFlags(&h.event, cudaEventDisableTiming) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    h.device = device;  // left for the process's life, like the thread's other CUDA state
  }
  double best = 1e300;
  for (int round = 0; round < 3; ++round) {
    const auto begin = std::chrono::steady_clock::now();
    for (int i = 0; i < 8; ++i)
      if (cudaEventRecord(h.event, h.stream) != cudaSuccess) return 0;
    if (cudaStreamSynchronize(h.stream) != cudaSuccess) return 0;
    best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - begin).count());
  }
  return best;
}

double time_host_copy_gbps() noexcept {
  // Made and touched once per thread, so the probe times the copy, not the first touch's faults.
  thread_local std::unique_ptr<unsigned char[]> from, to;
  if (!from) {
    from.reset(new (std::nothrow) unsigned char[host_copy_probe_bytes]);
    to.reset(new (std::nothrow) unsigned char[host_copy_probe_bytes]);
    if (!from || !to) {
      from.reset();
      return 0;
    }
    std::memset(from.get(), 1, host_copy_probe_bytes);
    std::memset(to.get(), 2, host_copy_probe_bytes);
  }
  const auto begin = std::chrono::steady_clock::now();
  std::memcpy(to.get(), from.get(), host_copy_probe_bytes);
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - begin).count();
  // Bytes read plus bytes written: the traffic a request's fill and read-back make of it too.
  return us > 0 ? 2.0 * static_cast<double>(host_copy_probe_bytes) / (us * 1e3) : 0;
}

}  // namespace ferry::bench
