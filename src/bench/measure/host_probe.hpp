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
//
// A third probe reads the host's memory bandwidth: large pageable, staged and host-written
// requests spend most of their time in the CPU's writes and reads of every byte, which a VM's
// memory system slows and speeds up between runs (5-30% on the H200 host for cells of 16 MB and
// up) while the GPU's own time stays put. It says whether a change of latency with an unchanged
// GPU time was the host's memory.
#pragma once

namespace ferry::bench {

// Microseconds the fixed work took this time (the least of three back-to-back runs, so one
// interrupt does not count as a slow host).
[[nodiscard]] double time_host_probe_us() noexcept;

// Microseconds eight cudaEventRecord calls on an idle stream of the current device and a
// cudaStreamSynchronize took (the least of three), or 0 when they failed.
[[nodiscard]] double time_cuda_probe_us() noexcept;

// GB/s of one memcpy of host_copy_probe_bytes between two host buffers of the calling thread
// (made and touched on first use, kept for the thread's life), or 0 when they cannot be made.
// About 1 ms on a host that copies at 10 GB/s; it evicts part of the CPU's caches, so loops
// call it between requests and seldom.
inline constexpr unsigned long host_copy_probe_bytes = 8UL << 20;
[[nodiscard]] double time_host_copy_gbps() noexcept;

}  // namespace ferry::bench
