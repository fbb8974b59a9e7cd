#include "bench/measure/um_counters.hpp"

#include <cuda_runtime_api.h>
#include <cupti_activity.h>
#include <cupti_result.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <string>
#include <utility>

#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"

namespace ferry::bench {

bool accumulate_um_record(um_traffic& totals, const CUpti_Activity& record) noexcept {
  if (record.kind != CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) return false;
  // kind, counterKind and value sit at the same offsets in every version of the UM record
  // (2 and 3), so reading them through the newest struct is safe whichever libcupti wrote it.
  const auto& um = reinterpret_cast<const CUpti_ActivityUnifiedMemoryCounter3&>(record);
  switch (um.counterKind) {
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
      totals.bytes_host_to_device += um.value;  // value: bytes of the migrated region
      return true;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH:
      totals.bytes_device_to_host += um.value;
      return true;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
      // value: fault groups that hit this page. The record exists because the page faulted,
      // so it counts at least once even if a driver reports 0.
      totals.gpu_page_faults += std::max<std::uint64_t>(um.value, 1);
      return true;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT:
      totals.cpu_page_faults += 1;  // value is the faulting instruction's address, not a count
      return true;
    default:
      return false;  // thrashing, throttling, remote map, device to device: not enabled here
  }
}

bool accumulate_copy_record(copy_traffic& totals, const CUpti_Activity& record) noexcept {
  if (record.kind != CUPTI_ACTIVITY_KIND_MEMCPY) return false;
  // Read through the struct of the headers this was built with, whose libcupti travels with it.
  const auto& copy = reinterpret_cast<const CUpti_ActivityMemcpy6&>(record);
  switch (copy.copyKind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      totals.host_to_device += copy.bytes;
      break;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      totals.device_to_host += copy.bytes;
      break;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      totals.device_to_device += copy.bytes;
      break;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      totals.peer += copy.bytes;
      break;
    default:
      totals.other += copy.bytes;
      break;
  }
  return true;
}

copy_traffic& operator+=(copy_traffic& total, const copy_traffic& more) noexcept {
  total.host_to_device += more.host_to_device;
  total.device_to_host += more.device_to_host;
  total.device_to_device += more.device_to_device;
  total.peer += more.peer;
  total.other += more.other;
  return total;
}

um_traffic& operator+=(um_traffic& total, const um_traffic& more) noexcept {
  total.bytes_host_to_device += more.bytes_host_to_device;
  total.bytes_device_to_host += more.bytes_device_to_host;
  total.gpu_page_faults += more.gpu_page_faults;
  total.cpu_page_faults += more.cpu_page_faults;
  return total;
}

namespace {

// Large enough that a 64 MiB fault-driven migration (tens of thousands of ~100-byte records)
// needs few buffer round trips; CUPTI asks for another whenever one fills.
constexpr std::size_t buffer_bytes = std::size_t{4} << 20;
constexpr std::size_t buffer_alignment = 8;  // CUPTI requires 8-byte aligned activity buffers

// Totals delivered by CUPTI's callbacks, which run on CUPTI's worker thread or inside a flush.
// Intentionally leaked: a buffer delivered while the process exits must not find it destroyed.
struct delivered_totals {
  std::mutex mutex;
  um_traffic traffic;         // guarded by mutex
  copy_traffic copies;        // guarded by mutex
  std::uint64_t dropped = 0;  // guarded by mutex
};
delivered_totals& delivered() {
  static auto* const totals = new delivered_totals;
  return *totals;
}

void deliver(const um_traffic& traffic, const copy_traffic& copies, std::uint64_t dropped) noexcept {
  auto& d = delivered();
  const std::lock_guard lock(d.mutex);
  d.traffic += traffic;
  d.copies += copies;
  d.dropped += dropped;
}

// Returns what was delivered since the last call and starts again from zero.
struct taken {
  um_traffic traffic;
  copy_traffic copies;
  std::uint64_t dropped = 0;
};
taken take_delivered() noexcept {
  auto& d = delivered();
  const std::lock_guard lock(d.mutex);
  return {std::exchange(d.traffic, {}), std::exchange(d.copies, {}), std::exchange(d.dropped, 0)};
}

// Records lost since the last call; CUPTI resets its count when asked.
std::uint64_t dropped_since_last_ask() noexcept {
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) != CUPTI_SUCCESS) return 0;
  return dropped;
}

void CUPTIAPI on_buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) noexcept {
  // aligned_alloc needs a size that is a multiple of the alignment; buffer_bytes is.
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(buffer_alignment, buffer_bytes));
  *size = *buffer != nullptr ? buffer_bytes : 0;  // no buffer: CUPTI drops and counts records
  *max_records = 0;                               // fill the whole buffer
}

void CUPTIAPI on_buffer_completed(CUcontext /*deprecated, always null*/, std::uint32_t /*stream*/, std::uint8_t* buffer,
                                  std::size_t /*size*/, std::size_t valid_size) noexcept {
  um_traffic traffic;
  copy_traffic copies;
  if (buffer != nullptr) {
    CUpti_Activity* record = nullptr;
    // Stops at the end (CUPTI_ERROR_MAX_LIMIT_REACHED) or at an incomplete record.
    while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS)
      if (!accumulate_um_record(traffic, *record)) (void)accumulate_copy_record(copies, *record);
    std::free(buffer);
  }
  deliver(traffic, copies, dropped_since_last_ask());
}

// One session at a time: CUPTI's callbacks and the delivered totals are process-global.
std::atomic<bool> session_active{false};
// The callbacks stay registered for the life of the process (CUPTI has no unregister);
// only the thread holding session_active touches this.
std::atomic<bool> callbacks_registered{false};

const char* hint(CUptiResult result) noexcept {
  switch (result) {
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED:
      return "this OS or CPU architecture has no unified-memory counters";
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE:
      return "this GPU has no unified-memory counters";
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES:
      return "several GPUs without peer access between them: expose one GPU with "
             "CUDA_VISIBLE_DEVICES";
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS:
      return "not supported under the Multi-Process Service";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "a virtual GPU (VM or vGPU) whose hypervisor does not allow profiling";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_DISABLED:
      return "another CUPTI client (Nsight Systems, Nsight Compute, cuda-gdb, a framework "
             "profiler) already uses CUPTI in this process";
    case CUPTI_ERROR_NOT_COMPATIBLE:
      return "CUPTI cannot enable the counters now, usually because another CUPTI client "
             "(Nsight Systems, Nsight Compute, a framework profiler) is attached";
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      return "GPU profiling is restricted to administrators on this machine";
    case CUPTI_ERROR_NOT_INITIALIZED:
      return "CUPTI could not attach to the CUDA driver (driver and libcupti versions differ?)";
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
      return "profiling is not supported in this GPU mode";
    default:
      return nullptr;
  }
}

const char* result_name(CUptiResult result) noexcept {
  const char* name = nullptr;
  if (cuptiGetResultString(result, &name) != CUPTI_SUCCESS || name == nullptr) return "an unknown CUPTI result";
  return name;
}

// "<call> failed: CUPTI_ERROR_X (CUPTI's message); <what it usually means here>"
std::string describe(const char* call, CUptiResult result) {
  std::string text = call;
  text += " failed: ";
  text += result_name(result);
  const char* message = nullptr;
  if (cuptiGetErrorMessage(result, &message) == CUPTI_SUCCESS && message != nullptr && *message != '\0') {
    text += " (";
    text += message;
    text += ')';
  }
  if (const char* why = hint(result)) {
    text += "; ";
    text += why;
  }
  return text;
}

// For destructors: no allocation, no throw.
void log_failure(const char* call, CUptiResult result) noexcept {
  if (result != CUPTI_SUCCESS) std::fprintf(stderr, "ferry: %s failed: %s\n", call, result_name(result));
}

// The four counters um_traffic reports. The scope and device fields are deprecated since
// CUDA 7.0 (CUPTI counts the whole process) but are still filled in as documented.
CUptiResult configure_counters(int device, bool enable) noexcept {
  constexpr CUpti_ActivityUnifiedMemoryCounterKind kinds[] = {
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
  };
  CUpti_ActivityUnifiedMemoryCounterConfig config[std::size(kinds)] = {};
  for (std::size_t i = 0; i < std::size(kinds); ++i) {
    config[i].scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE;
    config[i].kind = kinds[i];
    config[i].deviceId = static_cast<std::uint32_t>(device);
    config[i].enable = enable ? 1 : 0;
  }
  return cuptiActivityConfigureUnifiedMemoryCounter(config, static_cast<std::uint32_t>(std::size(kinds)));
}

// Turns the counters on; the caller holds session_active. Returns why not, or nullopt.
std::optional<std::string> enable_counters(int device, bool copies) {
  if (!callbacks_registered.load()) {
    if (const CUptiResult r = cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed);
        r != CUPTI_SUCCESS)
      return describe("cuptiActivityRegisterCallbacks", r);
    callbacks_registered.store(true);
  }
  // The previous session flushed everything it enabled; start this one from zero.
  (void)dropped_since_last_ask();
  (void)take_delivered();

  // The configuration must be in place before the activity kind is enabled.
  if (const CUptiResult r = configure_counters(device, true); r != CUPTI_SUCCESS)
    return describe("cuptiActivityConfigureUnifiedMemoryCounter", r);
  if (const CUptiResult r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER); r != CUPTI_SUCCESS) {
    log_failure("cuptiActivityConfigureUnifiedMemoryCounter(disable)", configure_counters(device, false));
    return describe("cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER)", r);
  }
  if (copies) {
    if (const CUptiResult r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY); r != CUPTI_SUCCESS) {
      log_failure("cuptiActivityDisable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER)",
                  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER));
      log_failure("cuptiActivityConfigureUnifiedMemoryCounter(disable)", configure_counters(device, false));
      return describe("cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY)", r);
    }
  }
  return std::nullopt;
}

}  // namespace

um_counter_session::um_counter_session(bool active, std::string reason, bool counts_copies) noexcept
    : active_(active), reason_(std::move(reason)), counts_copies_(counts_copies) {}

um_counter_session um_counter_session::start(int device, copy_counting copies) {
  if (device < 0) throw invalid_argument("GPU " + std::to_string(device) + " does not exist");
  // CUPTI's configuration call needs an initialized driver; cudaGetDeviceCount initializes it
  // without creating a context.
  const int count = cuda_device_count();
  if (count == 0) return um_counter_session(false, no_device_reason());
  if (device >= count)
    throw invalid_argument("GPU " + std::to_string(device) + " does not exist (this machine has " +
                           std::to_string(count) + ")");

  bool expected = false;
  if (!session_active.compare_exchange_strong(expected, true))
    return um_counter_session(false,
                              "another um_counter_session is active in this process (CUPTI's "
                              "activity buffers are process-wide)");
  std::optional<std::string> why_not;
  try {
    why_not = enable_counters(device, copies == copy_counting::on);
  } catch (...) {  // only bad_alloc while describing a failure; release the slot, then rethrow
    session_active.store(false);
    throw;
  }
  if (why_not) {
    session_active.store(false);
    return um_counter_session(false, "unified-memory counters unavailable: " + *why_not);
  }
  return um_counter_session(true, {}, copies == copy_counting::on);
}

um_counter_session::um_counter_session(um_counter_session&& other) noexcept
    : active_(std::exchange(other.active_, false)),
      reason_(std::move(other.reason_)),
      dropped_(other.dropped_),
      counts_copies_(std::exchange(other.counts_copies_, false)),
      copies_(other.copies_) {
  other.reason_.clear();
}

um_counter_session& um_counter_session::operator=(um_counter_session&& other) noexcept {
  if (this != &other) {
    stop();
    active_ = std::exchange(other.active_, false);
    reason_ = std::move(other.reason_);
    other.reason_.clear();
    dropped_ = other.dropped_;
    counts_copies_ = std::exchange(other.counts_copies_, false);
    copies_ = other.copies_;
  }
  return *this;
}

um_counter_session::~um_counter_session() { stop(); }

void um_counter_session::stop() noexcept {
  if (!active_) return;
  active_ = false;
  log_failure("cuptiActivityDisable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER)",
              cuptiActivityDisable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER));
  if (counts_copies_)
    log_failure("cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY)", cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY));
  counts_copies_ = false;
  // Hand back every buffer now, so none arrives during the next session.
  log_failure("cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)",
              cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  session_active.store(false);
}

std::optional<um_traffic> um_counter_session::take() {
  if (!active_) return std::nullopt;
  // Forced: also hand over buffers that are not full. Blocks until the callbacks have run;
  // the totals' mutex is not held here, since the callback may run on this very thread.
  if (const CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); r != CUPTI_SUCCESS) {
    reason_ = describe("cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)", r);
    return std::nullopt;
  }
  const std::uint64_t dropped_now = dropped_since_last_ask();
  const taken t = take_delivered();
  dropped_ = t.dropped + dropped_now;
  copies_ = t.copies;
  reason_.clear();
  return t.traffic;
}

}  // namespace ferry::bench
