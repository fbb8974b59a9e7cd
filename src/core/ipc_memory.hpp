// Device memory another process exported with cudaIpcGetMemHandle, opened in this process.
#pragma once

#include <cuda_runtime_api.h>

#include "ferry/core/error.hpp"

namespace ferry::core {

// CUDA refused to open an IPC handle (a stale or foreign handle, a handle of this very process,
// a device that cannot map it). Its own type so callers can tell the client's handle from a
// failure of the runtime itself.
class ipc_open_error : public cuda_error {
 public:
  using cuda_error::cuda_error;
};

// Owns one mapping of cudaIpcOpenMemHandle. Opening and closing happen on the handle's device,
// and both put back the device that was current before, on success and on failure alike: the
// opening thread may be serving requests on another GPU. Move-only; an empty (default or
// moved-from) one owns nothing and its destructor makes no CUDA call.
class ipc_memory {
 public:
  ipc_memory() = default;
  // Opens `handle` on `device` with peer access enabled lazily. Throws ipc_open_error when
  // cudaIpcOpenMemHandle fails, cuda_error when the device cannot be made current.
  ipc_memory(const cudaIpcMemHandle_t& handle, int device);
  ~ipc_memory();
  ipc_memory(ipc_memory&& other) noexcept;
  ipc_memory& operator=(ipc_memory&& other) noexcept;
  ipc_memory(const ipc_memory&) = delete;
  ipc_memory& operator=(const ipc_memory&) = delete;

  [[nodiscard]] void* get() const noexcept { return pointer_; }
  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] bool empty() const noexcept { return pointer_ == nullptr; }

 private:
  void close() noexcept;

  void* pointer_ = nullptr;
  int device_ = -1;
};

}  // namespace ferry::core
