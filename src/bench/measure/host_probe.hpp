// The host's speed, read off two fixed pieces of work timed on the thread that submits requests:
// a chain of dependent integer operations (the CPU), and eight event records on an idle stream
// and its synchronize (the CUDA driver's calls). Private to src/bench.
//
// On a shared or virtualised host the CPU's speed wanders: on the H200 host the same launch-bound
// engine ran 1.5 ms in one stretch and 2.3 ms in the next with the GPU's clocks unchanged, and
// small requests, pageable and staged copies moved with it. A cell that times this probe beside
// its requests can say when the host changed under it, and two reports can say whether their
// host ran at the same speed. The two move apart: between two runs on the H200 host the integer
// chain took the same 48-50 µs while the driver's calls (launches, events, copies enqueued) took
// 2-3x as long in one run as in the other.
#pragma once

namespace ferry::bench {

// Microseconds the fixed work took this time (the least of three back-to-back runs, so one
// interrupt does not count as a slow host).
[[nodiscard]] double time_host_probe_us() noexcept;

// Microseconds eight cudaEventRecord calls on an idle stream of the current device and a
// cudaStreamSynchronize took (the least of three), or 0 when they failed.
[[nodiscard]] double time_cuda_probe_us() noexcept;

}  // namespace ferry::bench
