// The system shared-memory extension: clients register POSIX shared-memory regions
// (shm_open keys) by name, then point inputs and outputs at ranges of them instead of sending
// bytes. Registering maps the region once and keeps its object open; on a GPU it is also
// page-locked for every GPU once (core::register_host), so a slot reads inputs from it and
// writes outputs into it by DMA in its stream order, with no staging copy. Every offset and
// byte size is checked against the region, and against the object's current size (the client may
// have shrunk it since), before a request is queued.
//
// Confined: a region maps an object of the server's machine into the server, where requests read
// it (inputs) and write it (outputs), so registering one is reading and writing that object with
// the server's rights. Region names and keys must be safe names (safe_name.hpp); a key must start
// with the server's key prefix when it has one (--allow-client-shm=PREFIX); and the object must
// belong to the user running the client, which must run on this machine (peer_identity.hpp), so
// a client reaches only what it could open itself. A region is then the registering client's
// (shm_client.hpp): only that client's user finds it for a request, lists it or unregisters it,
// and a client elsewhere uses no system region at all.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "serve/shm/region_table.hpp"
#include "serve/vocabulary/inference.hpp"
#include "serve/vocabulary/shm_client.hpp"

namespace ferry::serve {

enum class cuda_registration { off, on };

struct shm_region_status {
  std::string name;
  std::string key;
  std::size_t offset = 0;
  std::size_t byte_size = 0;
};

class shm_registry {
 public:
  // At most `max_regions` regions are registered at once; keys must start with `key_prefix`
  // (after the leading '/'), when it is not empty.
  explicit shm_registry(cuda_registration cuda, std::size_t max_regions = default_max_regions,
                        std::string key_prefix = {})
      : cuda_(cuda),
        regions_("shared-memory region", max_regions, "--max-shm-regions"),
        key_prefix_(std::move(key_prefix)) {}

  // Maps [offset, offset + byte_size) of the POSIX shared-memory object `key` as region `name` of
  // `client` (none: the server's own caller, whose objects are not checked).
  // Throws request_error: bad_request for a name or key that is not a safe name, a name the client
  // has registered already, a zero size, a range beyond the object's size, or an object that cannot be
  // opened or mapped (with the OS's reason); forbidden for a key without the prefix, a client not
  // on this machine, or an object another user owns; quota_exceeded when max_regions are
  // registered.
  void register_region(const std::string& name, const std::string& key, std::size_t offset, std::size_t byte_size,
                       const std::optional<shm_client>& client = std::nullopt);
  [[nodiscard]] const std::string& key_prefix() const noexcept { return key_prefix_; }
  // Every call below acts for `client` (none: the server's own caller) and sees its regions only;
  // another's region is not_found as if it did not exist. A client not on this machine is
  // refused (forbidden): it has no system regions.

  // Unregisters one region (not_found when unknown); requests still using it keep it mapped.
  void unregister_region(const std::string& name, const std::optional<shm_client>& client = std::nullopt);
  // Unregisters every region of the client.
  void unregister_all(const std::optional<shm_client>& client = std::nullopt);
  // Every region of the client, or the one named (not_found when unknown).
  [[nodiscard]] std::vector<shm_region_status> status(const std::string& name = {},
                                                      const std::optional<shm_client>& client = std::nullopt) const;
  [[nodiscard]] region_usage usage() const { return regions_.usage(); }

  // The checked range `ref` names in its region, which is added to `pins` so it stays mapped until
  // the request is answered. Throws request_error: not_found for an unregistered region,
  // bad_request for a range outside it or past the end its object has shrunk to (both naming
  // `tensor`).
  [[nodiscard]] std::span<std::byte> lookup(const shm_ref& ref, const std::string& tensor,
                                            std::vector<std::shared_ptr<const void>>& pins,
                                            const std::optional<shm_client>& client = std::nullopt) const;
  // Whether the client has a region `name` (false for a client not on this machine).
  [[nodiscard]] bool contains(const std::string& name, const std::optional<shm_client>& client = std::nullopt) const;

 private:
  struct region;
  // The owner the client's regions are filed under; forbidden for a client not on this machine.
  [[nodiscard]] static std::string local_owner(const std::optional<shm_client>& client);

  cuda_registration cuda_;
  region_table<region, shm_region_status> regions_;
  std::string key_prefix_;
};

}  // namespace ferry::serve
