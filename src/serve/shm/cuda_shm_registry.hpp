// The CUDA shared-memory extension: clients export device memory with cudaIpcGetMemHandle and
// register the handle by name; the server opens it once (cudaIpcOpenMemHandle) and closes it on
// unregister. Without a GPU there is nothing to open: registering is refused, saying why.
//
// A request's tensor in such a region is looked up as device memory (the opened pointer + the
// checked offset); the GPU executor binds an input there in place (session_executor.cpp) and
// copies an output there once the request completes.
//
// A region is the registering client's (shm_client.hpp): only that client finds it for a request,
// lists it or unregisters it. A CUDA IPC handle opens only on the machine that exported it, so a
// client elsewhere is refused nothing here, but its regions are filed under its address.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "serve/codec/base64.hpp"  // the HTTP extension's raw handles
#include "serve/shm/region_table.hpp"
#include "serve/vocabulary/inference.hpp"
#include "serve/vocabulary/shm_client.hpp"

namespace ferry::serve {

// A checked range of a CUDA region: device memory on `device`, never to be read by the CPU.
struct cuda_shm_range {
  std::span<std::byte> bytes;
  int device = 0;
};

struct cuda_shm_region_status {
  std::string name;
  std::int64_t device_id = 0;
  std::size_t byte_size = 0;
};

class cuda_shm_registry {
 public:
  // `gpus` GPUs are usable; with none, `no_gpu_reason` says why. At most `max_regions` regions
  // are registered at once.
  cuda_shm_registry(int gpus, std::string no_gpu_reason, std::size_t max_regions = default_max_regions);
  ~cuda_shm_registry();
  cuda_shm_registry(const cuda_shm_registry&) = delete;
  cuda_shm_registry& operator=(const cuda_shm_registry&) = delete;

  // Opens a cudaIpcMemHandle_t (its 64 raw bytes) on `device_id`. Throws request_error:
  // unavailable without a GPU, bad_request for a duplicate name, a handle of the wrong size, a
  // device that does not exist, a zero size, or a handle CUDA cannot open (with CUDA's reason);
  // quota_exceeded when max_regions are registered. The region is `client`'s (none: the server's
  // own caller).
  void register_region(const std::string& name, std::string_view raw_handle, std::int64_t device_id,
                       std::size_t byte_size, const std::optional<shm_client>& client = std::nullopt);
  // Every call below acts for `client` and sees its regions only; another's is not_found.
  void unregister_region(const std::string& name,
                         const std::optional<shm_client>& client = std::nullopt);  // not_found when unknown
  void unregister_all(const std::optional<shm_client>& client = std::nullopt);
  [[nodiscard]] std::vector<cuda_shm_region_status> status(
      const std::string& name = {}, const std::optional<shm_client>& client = std::nullopt) const;
  [[nodiscard]] bool contains(const std::string& name, const std::optional<shm_client>& client = std::nullopt) const;
  [[nodiscard]] region_usage usage() const { return regions_.usage(); }
  // Whether regions can be registered at all (the server has a GPU).
  [[nodiscard]] bool available() const noexcept { return gpus_ > 0; }

  // The checked device range `ref` names, its region added to `pins` so the IPC mapping stays
  // open until the request is answered. Throws request_error: not_found for an unregistered
  // region, bad_request for a range outside it (both naming `tensor`).
  [[nodiscard]] cuda_shm_range lookup(const shm_ref& ref, const std::string& tensor,
                                      std::vector<std::shared_ptr<const void>>& pins,
                                      const std::optional<shm_client>& client = std::nullopt) const;

 private:
  struct region;
  int gpus_;
  std::string no_gpu_reason_;
  region_table<region, cuda_shm_region_status> regions_;
};

}  // namespace ferry::serve
