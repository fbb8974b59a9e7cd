#include "bench/measure/host_probe.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>

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

}  // namespace ferry::bench
