#include "serve/shm/shm_registry.hpp"

#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <utility>

#include "core/host_registration.hpp"
#include "ferry/core/error.hpp"
#include "serve/codec/client_json.hpp"
#include "serve/shm/shm_range.hpp"
#include "serve/vocabulary/request_error.hpp"
#include "serve/vocabulary/safe_name.hpp"

namespace ferry::serve {

// One mapping of a region's object, page-locked for the GPUs where the server has them. A request
// pins the view it reads and writes, so a view replaced while requests use it lives until they end.
struct shm_region_view {
  void* mapping = nullptr;
  std::size_t mapping_bytes = 0;
  std::byte* data = nullptr;  // mapping + the offset's remainder within a page
  // Released before the unmapping.
  std::optional<core::host_registration> cuda_registration;

  shm_region_view() = default;
  shm_region_view(const shm_region_view&) = delete;
  shm_region_view& operator=(const shm_region_view&) = delete;
  ~shm_region_view() {
    cuda_registration.reset();
    if (mapping != nullptr) munmap(mapping, mapping_bytes);
  }
};

// One registered region; unmapped (and unregistered from CUDA) when the last user lets go.
struct shm_registry::region {
  shm_region_status status;
  // The object, kept open so every request can see its current size: the client may shrink it
  // after registering, and the mapping does not say so (its pages past the new end fault instead).
  int fd = -1;
  // The view requests use. Page-locking holds the pages the object had when the view was made:
  // once the object is truncated below the region and grown again, those pages are no longer the
  // object's, and a DMA through the old registration would read and write the orphaned ones (the
  // client would see zeros). So a view goes stale when a request finds the object smaller than the
  // region, or holding fewer blocks than when the view was made (a truncation drops the pages past
  // the new end; a grown object's pages come back only as the client writes them), and the next
  // request that fits makes a new view; the old one goes when its requests end. The object's change
  // time says nothing here: on tmpfs it moves with every write through a mapping (the client's
  // and the GPU's), and a new view per request (mmap and cudaHostRegister, about a millisecond)
  // once cut the system shared-memory path to a fraction of CUDA shared memory's rate.
  std::mutex view_mutex;
  std::uint64_t views_remade = 0;  // how often the object changed under the registration
  std::shared_ptr<shm_region_view> view;
  blkcnt_t view_blocks = 0;  // the object's allocated blocks once the view was page-locked
  bool view_stale = false;

  ~region() {
    view.reset();
    if (fd >= 0) close(fd);
  }
};

namespace {

std::string os_error(const char* call) { return std::string(call) + ": " + std::strerror(errno); }

// The object's allocated blocks now (page-locking a view faults every page of it in).
blkcnt_t allocated_blocks(int fd) {
  struct stat info {};
  return fstat(fd, &info) == 0 ? info.st_blocks : 0;
}

// Maps `byte_size` bytes at `offset` of the object and, with `page_lock`, registers them with CUDA.
// Calls `fail(cuda_failed, what)`, which throws, when the mapping or the registration fails.
template <class Fail>
std::shared_ptr<shm_region_view> make_view(int fd, std::size_t offset, std::size_t byte_size, bool page_lock,
                                           const Fail& fail) {
  auto v = std::make_shared<shm_region_view>();
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t aligned_offset = offset / page * page;
  v->mapping_bytes = byte_size + (offset - aligned_offset);
  void* p = mmap(nullptr, v->mapping_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(aligned_offset));
  if (p == MAP_FAILED) fail(false, os_error("mmap"));
  v->mapping = p;
  v->data = static_cast<std::byte*>(p) + (offset - aligned_offset);
  if (page_lock) {
    // Page-locked, so inputs are read from the region and outputs land in it by DMA in a slot's
    // stream order, with no staging copy. Portable: every GPU of the server may copy to and from
    // it; mapped: a zero-copy strategy may bind an engine to it in place. A failure is reported,
    // never silently served from pageable memory.
    try {
      v->cuda_registration.emplace(core::register_host(std::span(static_cast<std::byte*>(v->mapping), v->mapping_bytes),
                                                       cudaHostRegisterPortable | cudaHostRegisterMapped));
    } catch (const std::exception& e) {
      fail(true, e.what());
    }
  }
  return v;
}

}  // namespace

void shm_registry::register_region(const std::string& name, const std::string& key, std::size_t offset,
                                   std::size_t byte_size, const std::optional<shm_client>& client) {
  if (const auto why = name_problem(name))
    throw bad_request("shared-memory region name '" + printable_name(name) + "' " + *why +
                      ": region names must be printable UTF-8 without / \\ \"");
  // shm_open() takes the key with one leading '/' or none; what follows it names the object.
  const std::string_view object = std::string_view(key).substr(key.rfind('/', 0) == 0 ? 1 : 0);
  if (const auto why = name_problem(object))
    throw bad_request("shared-memory region '" + name + "': key '" + quote_text(key, max_name_bytes + 1) + "' " + *why +
                      ": a key is '/' and a name of printable UTF-8 without / \\ \"");
  if (object.rfind(key_prefix_, 0) != 0)
    throw request_error(error_status::forbidden, "shared-memory region '" + name + "': key '" + key +
                                                     "' is refused: this server registers only objects whose name "
                                                     "starts with '" +
                                                     key_prefix_ + "' (--allow-client-shm=" + key_prefix_ + ")");
  const std::string owner = local_owner(client);
  if (byte_size == 0) throw bad_request("shared-memory region '" + name + "': byte_size is 0");
  regions_.check_free(owner, name);
  auto r = std::make_shared<region>();
  r->status = {name, key, offset, byte_size};
  r->fd = shm_open(key.c_str(), O_RDWR, 0);  // glibc opens it close-on-exec
  if (r->fd < 0)
    throw bad_request("shared-memory region '" + name + "': cannot open key '" + key + "': " + os_error("shm_open"));
  struct stat info {};
  if (fstat(r->fd, &info) != 0) throw bad_request("shared-memory region '" + name + "': " + os_error("fstat"));
  // The server may open objects the client may not: it registers only the client's own.
  if (client && info.st_uid != *client->uid)
    throw request_error(error_status::forbidden, "shared-memory region '" + name + "': the object '" + key +
                                                     "' belongs to uid " + std::to_string(info.st_uid) +
                                                     ", not to the client's user (uid " + std::to_string(*client->uid) +
                                                     ")");
  const auto object_bytes = static_cast<std::size_t>(info.st_size);
  if (offset > object_bytes || byte_size > object_bytes - offset) {
    throw bad_request("shared-memory region '" + name + "': offset " + std::to_string(offset) + " + byte_size " +
                      std::to_string(byte_size) + " exceeds the " + std::to_string(object_bytes) + " bytes of '" + key +
                      "'");
  }
  r->view = make_view(r->fd, offset, byte_size, cuda_ == cuda_registration::on,
                      [&](bool cuda_failed, const std::string& what) {
                        if (!cuda_failed) throw bad_request("shared-memory region '" + name + "': " + what);
                        throw request_error(error_status::internal, "shared-memory region '" + name + "': " + what);
                      });
  r->view_blocks = allocated_blocks(r->fd);
  regions_.insert(owner, name, std::move(r));
}

std::string shm_registry::local_owner(const std::optional<shm_client>& client) {
  if (client && !client->uid)
    throw request_error(error_status::forbidden,
                        "system shared memory is for clients on this machine: the client (" +
                            printable_name(client->address) +
                            ") is not a process of this machine, whose shared memory it could not share");
  return region_owner(client);
}

void shm_registry::unregister_region(const std::string& name, const std::optional<shm_client>& client) {
  regions_.erase(local_owner(client), name);
}
void shm_registry::unregister_all(const std::optional<shm_client>& client) { regions_.clear(local_owner(client)); }
std::vector<shm_region_status> shm_registry::status(const std::string& name,
                                                    const std::optional<shm_client>& client) const {
  return regions_.status(local_owner(client), name);
}
bool shm_registry::contains(const std::string& name, const std::optional<shm_client>& client) const {
  return (!client || client->uid) && regions_.contains(region_owner(client), name);
}

std::span<std::byte> shm_registry::lookup(const shm_ref& ref, const std::string& tensor,
                                          std::vector<std::shared_ptr<const void>>& pins,
                                          const std::optional<shm_client>& client) const {
  auto r = regions_.find(local_owner(client), ref.region, tensor);
  const auto current_view = [&r] {
    const std::lock_guard lock(r->view_mutex);
    return r->view;
  };
  // The range first, so a bad offset is named as such (every view of the region has its size).
  (void)checked_range(ref, std::span(current_view()->data, r->status.byte_size), tensor);
  // The object may have shrunk since it was registered: touching its pages past the new end
  // would fault. A truncation racing the copies that follow is caught by the copies themselves
  // (shm_guarded_copy.hpp); this check answers every earlier one before the request is queued.
  struct stat info {};
  if (fstat(r->fd, &info) != 0)
    throw request_error(error_status::internal,
                        tensor + ": shared-memory region '" + ref.region + "': " + os_error("fstat"));
  const auto object_bytes = static_cast<std::size_t>(info.st_size);
  const std::size_t needed = r->status.offset + ref.offset + ref.byte_size;  // all within the registered range
  if (object_bytes < r->status.offset + r->status.byte_size || info.st_blocks < r->view_blocks) {
    const std::lock_guard lock(r->view_mutex);
    r->view_stale = true;  // some of the registered pages may no longer be the object's
  }
  if (object_bytes < needed)
    throw bad_request(tensor + ": shared-memory region '" + ref.region + "' has shrunk: its object '" + r->status.key +
                      "' is now " + std::to_string(object_bytes) +
                      " bytes, smaller than the region's offset + the range's offset + byte_size = " +
                      std::to_string(r->status.offset) + " + " + std::to_string(ref.offset) + " + " +
                      std::to_string(ref.byte_size) + " = " + std::to_string(needed));
  std::shared_ptr<shm_region_view> view;
  {
    const std::lock_guard lock(r->view_mutex);
    const bool fits = object_bytes >= r->status.offset + r->status.byte_size;
    // Page-locked pages that may be orphaned are never used: until the object covers the whole
    // region again (and a new view can be page-locked), its requests are refused.
    if (r->view->cuda_registration && r->view_stale && !fits)
      throw bad_request(tensor + ": shared-memory region '" + ref.region + "' has shrunk: its object '" +
                        r->status.key + "' is now " + std::to_string(object_bytes) +
                        " bytes, less than the region's offset + byte_size = " +
                        std::to_string(r->status.offset + r->status.byte_size) +
                        "; grow it back (or register the region again) to use it");
    if (r->view->cuda_registration && r->view_stale) {
      r->view = make_view(r->fd, r->status.offset, r->status.byte_size, true, [&](bool, const std::string& what) {
        throw request_error(error_status::internal, tensor + ": shared-memory region '" + ref.region +
                                                        "' changed and could not be mapped again: " + what);
      });
      r->view_stale = false;
      r->view_blocks = allocated_blocks(r->fd);
      // Said at 1, 10, 100, ... times: mapping and page-locking again costs a request about a
      // millisecond, so a client that keeps changing its object should know it does.
      if (const auto n = ++r->views_remade; n == 1 || n == 10 || n == 100 || n == 1000 || n % 10000 == 0)
        std::fprintf(stderr,
                     "ferry serve: system shared-memory region '%s' changed (its object was truncated): mapped "
                     "and page-locked again, %llu time(s) so far\n",
                     ref.region.c_str(), static_cast<unsigned long long>(n));
    }
    view = r->view;
  }
  const auto range = checked_range(ref, std::span(view->data, r->status.byte_size), tensor);
  // One pin per range: the region (its object) and the view the range lies in.
  pins.push_back(std::make_shared<const std::pair<std::shared_ptr<region>, std::shared_ptr<shm_region_view>>>(
      std::move(r), std::move(view)));
  return range;
}

}  // namespace ferry::serve
