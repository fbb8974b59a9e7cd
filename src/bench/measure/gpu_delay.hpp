// The --slowdown test hook's GPU half: a known change of the GPU's own time per request, so that
// `ferry bench compare` can be checked on that figure as well as end to end. Private to src/bench.
//
// The host half (cell_samples.hpp's stretched) holds each request's clock back after its outputs
// were read; that moves end-to-end latency and nothing the GPU's events see. This half puts a
// kernel that spins on the GPU's clock on the slot's stream, after the engine, so it lies between
// the request's first and last event: the GPU figure (and the compute stage) grows by it, and the
// host waits for it as for any GPU work. Together they make a request `fraction` longer on both
// figures (stretched takes the GPU's share off the host's wait).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "ferry/core/stream.hpp"
#include "ferry/engines/engine.hpp"

namespace ferry::bench {

// One cell's GPU delay: `fraction` of the request's GPU time without it. The kernel reads its
// length from pinned host memory when it runs (so a CUDA graph that captured the kernel spins
// for the current length), and the length follows the cell's measured GPU time: the loops report
// each event-timed request's span (observe), and later kernels spin for `fraction` of the median
// of the last 63 of those spans less the delay in them. Until the first span is known there is no delay.
//
// The kernel itself costs a few microseconds even when it does not spin (the gap between two
// kernels on a stream, and its own run), which for a 20 µs request is more than a 10% delay. So
// that cost is measured once (appended_kernel_us) and counted: it is part of the delay, the
// kernel spins for the rest, and where the fraction asked is below it, the request is slowed by
// that cost alone and floor_note() says so. Where a span is mostly the host's launches (a device
// cell of tens of µs; compare marks them), the GPU waits for the kernel's launch as for the
// engine's, so the kernel costs what the host takes to launch it at that moment: there the delay
// is only roughly the fraction asked.
class gpu_delay {
 public:
  // Allocates the pinned length and measures the kernel's own cost on the current device (throws
  // cuda_error where it cannot).
  explicit gpu_delay(double fraction);
  ~gpu_delay();
  gpu_delay(const gpu_delay&) = delete;
  gpu_delay& operator=(const gpu_delay&) = delete;

  // Enqueues the spin kernel on `stream` (its device current).
  void enqueue(stream_ref stream) const;
  // A request's GPU span (µs), the delay it had included.
  void observe(double gpu_span_us);
  // The delay each request has now (µs): the spin and the kernel's own cost.
  [[nodiscard]] double delay_us() const;
  [[nodiscard]] double fraction() const noexcept { return fraction_; }
  // Where the delay asked was smaller than the kernel's own cost (the GPU time grew by more than
  // the fraction asked): a sentence saying by how much; otherwise empty.
  [[nodiscard]] std::string floor_note() const;

 private:
  double fraction_;
  double kernel_cost_us_ = 0;  // what the kernel costs a request when it does not spin, measured once
  volatile std::int64_t* nanoseconds_ = nullptr;  // pinned and mapped: the host writes, the kernel reads
  mutable std::mutex mutex_;                      // client threads observe at once
  double undelayed_us_ = 0;                       // the median GPU span without the delay; 0: none yet
  std::array<double, 63> recent_{};               // the last spans without the delay, a ring
  std::size_t observed_ = 0;                      // spans observed so far
};

// An engine whose contexts enqueue `inner`'s work and then `delay`'s kernel on the same stream;
// everything else is `inner`'s. `delay` must outlive it; the first form also `inner`.
[[nodiscard]] std::unique_ptr<engine> delayed(engine& inner, gpu_delay& delay);
[[nodiscard]] std::unique_ptr<engine> delayed(std::unique_ptr<engine> inner, gpu_delay& delay);

}  // namespace ferry::bench
