#include "core/ipc_memory.hpp"

#include <utility>

#include "core/scoped_device.hpp"

namespace ferry::core {

ipc_memory::ipc_memory(const cudaIpcMemHandle_t& handle, int device) : device_(device) {
  const scoped_device on_device(device);
  void* pointer = nullptr;
  const cudaError_t rc = cudaIpcOpenMemHandle(&pointer, handle, cudaIpcMemLazyEnablePeerAccess);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();  // the failure is reported here, not at the next unrelated call
    throw ipc_open_error(rc, "cudaIpcOpenMemHandle", __FILE__, __LINE__);
  }
  pointer_ = pointer;
}

ipc_memory::~ipc_memory() { close(); }

ipc_memory::ipc_memory(ipc_memory&& other) noexcept
    : pointer_(std::exchange(other.pointer_, nullptr)), device_(std::exchange(other.device_, -1)) {}

ipc_memory& ipc_memory::operator=(ipc_memory&& other) noexcept {
  if (this != &other) {
    close();
    pointer_ = std::exchange(other.pointer_, nullptr);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

void ipc_memory::close() noexcept {
  if (pointer_ == nullptr) return;
  // The mapping is closed in the context it was opened in. scoped_device would throw if the
  // device could not be made current; a destructor logs that and still tries to close.
  int previous = -1;
  const bool know_previous = cudaGetDevice(&previous) == cudaSuccess;
  if (!know_previous || previous != device_) FERRY_CUDA_TRY_NOTHROW(cudaSetDevice(device_));
  FERRY_CUDA_TRY_NOTHROW(cudaIpcCloseMemHandle(pointer_));
  if (know_previous && previous != device_) FERRY_CUDA_TRY_NOTHROW(cudaSetDevice(previous));
  pointer_ = nullptr;
}

}  // namespace ferry::core
