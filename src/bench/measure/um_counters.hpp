// Unified-memory traffic counted by CUPTI, so `ferry bench` can show what managed memory moved.
//
// What the four numbers mean (all summed over the interval between two take() calls):
//   bytes_host_to_device, bytes_device_to_host: bytes the driver migrated between host and
//     device memory for managed allocations (cudaMallocManaged), whatever caused it: a GPU or
//     CPU page fault, cudaMemPrefetchAsync, the driver's own speculative prefetch, eviction.
//   gpu_page_faults: GPU fault groups on managed pages. CUPTI emits one record per faulting page
//     with the number of fault groups that hit it; we sum those. A group batches many faulting
//     accesses, so this is far below the number of accesses, but it tracks the fault-driven cost.
//   cpu_page_faults: CPU page faults on managed memory, one per CUPTI record.
//
// Limits:
//   - Only managed-memory migration is seen here; cudaMemcpy* (pageable, staged, pinned) shows up
//     only in copies(), with copy counting on. Kernels reading mapped or registered host memory
//     never show up, nor do managed pages the GPU reads
//     remotely without migrating them (preferred location host + accessed-by GPU). Zero bytes
//     for those strategies is expected; it does not mean nothing crossed the bus.
//   - The counters are process-wide: traffic of every thread and every GPU of the process is
//     summed (CUPTI has ignored the per-device scope since CUDA 7.0). Measure one thing at a time.
//   - CUPTI drops records when it has no buffer for them; dropped_records() says how many, and
//     the totals of that take() are then lower bounds.
//   - take() forces CUPTI to hand over what it holds, but it does not wait for GPU work:
//     synchronize first. A record the driver reports late lands in the next take().
//   - CUPTI's activity buffers are process-global: only one session at a time, and another CUPTI
//     client in the process (Nsight Systems, Nsight Compute, a framework's profiler) makes
//     start() report the counters unavailable.
//   - Counting may slow every migration and fault down; keep it out of the timed iterations
//     whose latency is reported, or say that it was on.
#pragma once

#include <cupti_activity.h>

#include <cstdint>
#include <optional>
#include <string>

#include "ferry/bench/result.hpp"

namespace ferry::bench {

// Adds one CUPTI activity record to `totals`. Returns false (and changes nothing) for records
// that are not one of the four unified-memory counters above. Pure: no CUPTI call, so it is
// testable with synthetic records.
bool accumulate_um_record(um_traffic& totals, const CUpti_Activity& record) noexcept;

um_traffic& operator+=(um_traffic& total, const um_traffic& more) noexcept;

// Bytes moved by explicit copies (cudaMemcpy*, in CUPTI's MEMCPY records), by direction. Kernels
// that read or write host memory in place (mapped, registered-mapped, managed-advise) are not
// copies and do not show; neither does managed-memory migration (um_traffic counts that).
struct copy_traffic {
  std::uint64_t host_to_device = 0;
  std::uint64_t device_to_host = 0;
  std::uint64_t device_to_device = 0;  // within one GPU
  std::uint64_t peer = 0;              // between GPUs
  std::uint64_t other = 0;             // host to host, arrays
};

// Adds one CUPTI MEMCPY record to `totals`; false (nothing changed) for any other record. Pure.
bool accumulate_copy_record(copy_traffic& totals, const CUpti_Activity& record) noexcept;

copy_traffic& operator+=(copy_traffic& total, const copy_traffic& more) noexcept;

// Whether a session also counts explicit copies (CUPTI's MEMCPY activity, one record per copy).
enum class copy_counting { off, on };

// Counts unified-memory traffic from start() until destruction. One per process at a time.
class um_counter_session {
 public:
  // Enables CUPTI's unified-memory counters (bytes HtoD, DtoH, GPU and CPU page faults).
  // Never throws because counting is impossible here: the session then is !available() and
  // reason() says why (no GPU, UM profiling unsupported on this platform or device, a virtual
  // GPU, MPS, another CUPTI client or another session active, ...). Throws invalid_argument
  // only for a device ordinal that does not exist on a machine that has GPUs.
  // With copy_counting::on it also counts explicit copies (copies()).
  [[nodiscard]] static um_counter_session start(int device, copy_counting copies = copy_counting::off);

  um_counter_session(um_counter_session&& other) noexcept;
  um_counter_session& operator=(um_counter_session&& other) noexcept;
  um_counter_session(const um_counter_session&) = delete;
  um_counter_session& operator=(const um_counter_session&) = delete;
  // Disables the counters and flushes CUPTI's buffers; never throws (failures go to stderr).
  ~um_counter_session();

  [[nodiscard]] bool available() const noexcept { return active_; }
  // Why the counters are unavailable, or why the last take() failed; empty otherwise.
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

  // Flushes CUPTI's buffers and returns the totals since start() or the previous take(), then
  // starts counting from zero again. Synchronize the GPU work to be counted first.
  // nullopt when unavailable, or when CUPTI failed to flush (reason() then says why).
  [[nodiscard]] std::optional<um_traffic> take();

  // Records CUPTI dropped (for lack of buffer space) during the interval of the last take().
  // Nonzero means that take()'s totals are lower bounds.
  [[nodiscard]] std::uint64_t dropped_records() const noexcept { return dropped_; }

  // What explicit copies moved during the interval of the last take(); all zero unless the
  // session was started with copy_counting::on.
  [[nodiscard]] const copy_traffic& copies() const noexcept { return copies_; }

 private:
  um_counter_session(bool active, std::string reason, bool counts_copies = false) noexcept;
  void stop() noexcept;

  bool active_ = false;  // this object has the counters enabled and owns the process's slot
  std::string reason_;
  std::uint64_t dropped_ = 0;
  bool counts_copies_ = false;  // this object enabled CUPTI's MEMCPY activity
  copy_traffic copies_;
};

}  // namespace ferry::bench
