#include "serve/shm/cuda_shm_registry.hpp"

#include <cuda_runtime_api.h>

#include <cstring>
#include <optional>

#include "core/ipc_memory.hpp"
#include "core/scoped_device.hpp"
#include "ferry/core/error.hpp"
#include "ferry/memory/data_location.hpp"
#include "serve/shm/shm_range.hpp"
#include "serve/vocabulary/request_error.hpp"
#include "serve/vocabulary/safe_name.hpp"

namespace ferry::serve {

struct cuda_shm_registry::region {
  cuda_shm_region_status status;
  core::ipc_memory memory;  // closed on its device when the last pin goes
};

cuda_shm_registry::cuda_shm_registry(int gpus, std::string no_gpu_reason, std::size_t max_regions)
    : gpus_(gpus),
      no_gpu_reason_(std::move(no_gpu_reason)),
      regions_("CUDA shared-memory region", max_regions, "--max-cuda-shm-regions") {}

cuda_shm_registry::~cuda_shm_registry() = default;

void cuda_shm_registry::register_region(const std::string& name, std::string_view raw_handle, std::int64_t device_id,
                                        std::size_t byte_size, const std::optional<shm_client>& client) {
  if (const auto why = name_problem(name))
    throw bad_request("CUDA shared-memory region name '" + printable_name(name) + "' " + *why +
                      ": region names must be printable UTF-8 without / \\ \"");
  const std::string who = "CUDA shared-memory region '" + name + "'";
  if (gpus_ == 0)
    throw request_error(
        error_status::unavailable,
        who + ": CUDA shared memory needs a GPU and this server runs on the CPU (" + no_gpu_reason_ + ")");
  if (byte_size == 0) throw bad_request(who + ": byte_size is 0");
  if (raw_handle.size() != sizeof(cudaIpcMemHandle_t))
    throw bad_request(who + ": raw_handle has " + std::to_string(raw_handle.size()) +
                      " bytes, a cudaIpcMemHandle_t has " + std::to_string(sizeof(cudaIpcMemHandle_t)));
  if (device_id < 0 || device_id >= gpus_)
    throw bad_request(who + ": device_id " + std::to_string(device_id) + " is not one of this server's " +
                      std::to_string(gpus_) + " GPU(s)");
  const std::string owner = region_owner(client);
  regions_.check_free(owner, name);
  auto r = std::make_shared<region>();
  r->status = {name, device_id, byte_size};
  cudaIpcMemHandle_t handle;
  std::memcpy(&handle, raw_handle.data(), sizeof handle);
  const int device = static_cast<int>(device_id);
  try {
    r->memory = core::ipc_memory(handle, device);
  } catch (const core::ipc_open_error& e) {
    throw bad_request(who + ": cudaIpcOpenMemHandle failed: " + cudaGetErrorName(e.code()) + " (" +
                      cudaGetErrorString(e.code()) + ")");
  }
  // The client states byte_size; its last byte must be device memory of the same GPU, or a
  // request could make the engine read past the exported allocation. (An IPC mapping covers
  // the whole allocation, so a byte_size within it passes.)
  std::optional<pointer_facts> last;
  try {
    const core::scoped_device on_device(device);  // asked where it was opened
    last = query_pointer(static_cast<const std::byte*>(r->memory.get()) + (byte_size - 1), 1);
  } catch (const cuda_error&) {
    // Not an address CUDA knows: refused below like any other.
  }
  if (!last || last->memory != pointer_facts::kind::device || last->device != device)
    throw bad_request(who + ": byte_size " + std::to_string(byte_size) +
                      " reaches past the device memory the handle exports");
  regions_.insert(owner, name, std::move(r));
}

void cuda_shm_registry::unregister_region(const std::string& name, const std::optional<shm_client>& client) {
  regions_.erase(region_owner(client), name);
}
void cuda_shm_registry::unregister_all(const std::optional<shm_client>& client) {
  regions_.clear(region_owner(client));
}
std::vector<cuda_shm_region_status> cuda_shm_registry::status(const std::string& name,
                                                              const std::optional<shm_client>& client) const {
  return regions_.status(region_owner(client), name);
}
bool cuda_shm_registry::contains(const std::string& name, const std::optional<shm_client>& client) const {
  return regions_.contains(region_owner(client), name);
}

cuda_shm_range cuda_shm_registry::lookup(const shm_ref& ref, const std::string& tensor,
                                         std::vector<std::shared_ptr<const void>>& pins,
                                         const std::optional<shm_client>& client) const {
  auto r = regions_.find(region_owner(client), ref.region, tensor);
  const std::span<std::byte> whole(static_cast<std::byte*>(r->memory.get()), r->status.byte_size);
  const cuda_shm_range range{checked_range(ref, whole, tensor), static_cast<int>(r->status.device_id)};
  pins.push_back(std::move(r));
  return range;
}

}  // namespace ferry::serve
