// The host CPU's speed, read off a fixed piece of work: a chain of dependent integer operations
// that takes ~20 us on a 3 GHz core, timed on the thread that submits requests. Private to
// src/bench.
//
// On a shared or virtualised host the CPU's speed wanders: on the H200 host the same launch-bound
// engine ran 1.5 ms in one stretch and 2.3 ms in the next with the GPU's clocks unchanged, and
// small requests, pageable and staged copies moved with it. A cell that times this probe beside
// its requests can say when the host changed under it, and two reports can say whether their
// host ran at the same speed.
#pragma once

namespace ferry::bench {

// Microseconds the fixed work took this time (the least of three back-to-back runs, so one
// interrupt does not count as a slow host).
[[nodiscard]] double time_host_probe_us() noexcept;

}  // namespace ferry::bench
