// A lost GPU context: the one record of the process's first sticky CUDA error.
//
// Some CUDA errors are not a failed call but a dead context: a device-side assert (a model's
// embedding given a token id past its table), an illegal address, an uncorrectable ECC error.
// After one, every CUDA call of the process on that GPU returns the same error until the process
// exits. ferry notes the first such error here, once, wherever it is seen (FERRY_CUDA_TRY, a
// backend's report), so that:
// - servers turn not live and not ready and exit for a restart (serve), and a benchmark stops and
//   writes what it measured before (bench), instead of answering 500 forever;
// - cleanup stops calling CUDA and backends: FERRY_CUDA_TRY_NOTHROW skips its call once a fault
//   is noted, so a poisoned context is reported once, not by every destructor.
#pragma once

#include <cuda_runtime_api.h>

#include <optional>
#include <string>

namespace ferry {

// Whether `code` leaves the process's context unusable (the CUDA runtime's own wording: "To
// continue using CUDA, the process must be terminated and relaunched"), or reports a hardware
// error of the same consequence (uncorrectable ECC or NVLink errors).
[[nodiscard]] bool is_sticky(cudaError_t code) noexcept;

struct device_fault_record {
  int ordinal = -1;  // the GPU current on the thread that saw it; -1 when none was
  cudaError_t code = cudaSuccess;
  std::string what;  // the error's one-line description
};

// The first fault of the process, or nullopt. Safe from any thread.
[[nodiscard]] std::optional<device_fault_record> first_device_fault();
// Whether a fault was noted: one atomic load, for hot paths and destructors.
[[nodiscard]] bool device_faulted() noexcept;
// Notes a fault; only the first one of the process is kept. Returns true for that first one, so
// its caller is the one that logs it.
bool note_device_fault(const device_fault_record& fault) noexcept;
// Notes a fault seen on this thread (with the GPU current here) and throws it as
// ferry::device_fault carrying `message`.
[[noreturn]] void raise_device_fault(cudaError_t code, const std::string& message);
// The GPU current on this thread, -1 when none: cudaGetDevice answers in a lost context too.
[[nodiscard]] int current_ordinal() noexcept;

}  // namespace ferry
