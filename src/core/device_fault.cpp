#include "ferry/core/device_fault.hpp"

#include <atomic>
#include <mutex>

#include "ferry/core/error.hpp"

namespace ferry {
namespace {

std::atomic<bool> faulted{false};
std::mutex record_mutex;
std::optional<device_fault_record> first;  // guarded by record_mutex

}  // namespace

bool is_sticky(cudaError_t code) noexcept {
  switch (code) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorContained:
    case cudaErrorMpsClientTerminated:
    case cudaErrorExternalDevice:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
      return true;
    default:
      return false;
  }
}

std::optional<device_fault_record> first_device_fault() {
  const std::lock_guard lock(record_mutex);
  return first;
}

bool device_faulted() noexcept { return faulted.load(std::memory_order_acquire); }

bool note_device_fault(const device_fault_record& fault) noexcept {
  try {
    const std::lock_guard lock(record_mutex);
    if (first) return false;
    first = fault;
  } catch (...) {  // no memory for the text: the flag below still stops cleanup from calling CUDA
  }
  faulted.store(true, std::memory_order_release);
  return true;
}

void raise_device_fault(cudaError_t code, const std::string& message) {
  note_device_fault({.ordinal = current_ordinal(), .code = code, .what = message});
  throw device_fault(code, message);
}

int current_ordinal() noexcept {
  int ordinal = -1;
  if (cudaGetDevice(&ordinal) != cudaSuccess) return -1;
  return ordinal;
}

}  // namespace ferry
