// The CUDA shared-memory extension: clients export device memory with cudaIpcGetMemHandle and
// register the handle by name; the server opens it once (cudaIpcOpenMemHandle) and closes it on
// unregister. Without a GPU there is nothing to open: registering is refused, saying why.
//
// Tensors in CUDA shared memory are not served yet: binding them without a device-to-device
// copy needs a session that binds caller device memory per request, which ferry's session does
// not offer; a request pointing at such a region is refused by name rather than copied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::serve {

struct cuda_shm_region_status {
  std::string name;
  std::int64_t device_id = 0;
  std::size_t byte_size = 0;
};

class cuda_shm_registry {
 public:
  // `gpus` GPUs are usable; with none, `no_gpu_reason` says why.
  cuda_shm_registry(int gpus, std::string no_gpu_reason);
  ~cuda_shm_registry();
  cuda_shm_registry(const cuda_shm_registry&) = delete;
  cuda_shm_registry& operator=(const cuda_shm_registry&) = delete;

  // Opens a cudaIpcMemHandle_t (its 64 raw bytes) on `device_id`. Throws request_error:
  // unavailable without a GPU, bad_request for a duplicate name, a handle of the wrong size, a
  // device that does not exist, a zero size, or a handle CUDA cannot open (with CUDA's reason).
  void register_region(const std::string& name, std::string_view raw_handle, std::int64_t device_id,
                       std::size_t byte_size);
  void unregister_region(const std::string& name);  // not_found when unknown
  void unregister_all();
  [[nodiscard]] std::vector<cuda_shm_region_status> status(const std::string& name = {}) const;
  [[nodiscard]] bool contains(const std::string& name) const;

 private:
  struct region;
  int gpus_;
  std::string no_gpu_reason_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<region>> regions_;
};

// Decodes standard base64 (RFC 4648, with padding), as the HTTP extension sends raw handles.
// Throws request_error(bad_request) for malformed text.
[[nodiscard]] std::string decode_base64(std::string_view text);

}  // namespace ferry::serve
