// The named, thread-safe table of registered regions that both shared-memory extensions keep
// (system and CUDA): registration, unregistration, status and lookup by name, with the same
// messages for both, apart from what the region is called ("shared-memory region", "CUDA
// shared-memory region"). A request pins the region it reads (shared_ptr), so unregistering
// never unmaps memory a request still uses.
//
// The table holds at most `max_regions` regions. Every region costs the server a mapping (the
// kernel allows a process about 65,000) or an opened IPC handle, and a file descriptor: without a
// limit one client registering the same small region over and over exhausts them, and then every
// request fails, even the unregister that would free them.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve {

// The default of ferry serve's --max-shm-regions and --max-cuda-shm-regions, each.
inline constexpr std::size_t default_max_regions = 1024;

// How full a table is, for /metrics.
struct region_usage {
  std::size_t registered = 0;
  std::size_t limit = 0;
};

// Region must have a `status` member of type Status. Regions are filed by owner (shm_client.hpp):
// every call names the owner it acts for, and sees that owner's regions only. Another owner's
// region is answered exactly as one that does not exist.
template <class Region, class Status>
class region_table {
 public:
  // `limit_option` names the setting that raises the limit, for the refusal's message.
  region_table(std::string kind, std::size_t max_regions, std::string limit_option)
      : kind_(std::move(kind)), max_regions_(max_regions), limit_option_(std::move(limit_option)) {}

  // Throws bad_request when `owner` has a region `name`, quota_exceeded when the table is full:
  // checked before the costly mapping, and again on insert.
  void check_free(const std::string& owner, const std::string& name) const {
    const std::lock_guard lock(mutex_);
    check_room(owner, name);
  }
  void insert(const std::string& owner, const std::string& name, std::shared_ptr<Region> r) {
    const std::lock_guard lock(mutex_);
    check_room(owner, name);
    regions_.emplace(key{owner, name}, std::move(r));
  }
  void erase(const std::string& owner, const std::string& name) {
    const std::lock_guard lock(mutex_);
    if (regions_.erase(key{owner, name}) == 0) throw request_error(error_status::not_found, unknown(name));
  }
  // Every region of `owner`.
  void clear(const std::string& owner) {
    const std::lock_guard lock(mutex_);
    const auto [first, last] = owned_by(owner);
    regions_.erase(first, last);
  }
  // Every region's status of `owner`, or the named one's (not_found when `owner` has none of
  // that name).
  [[nodiscard]] std::vector<Status> status(const std::string& owner, const std::string& name) const {
    const std::lock_guard lock(mutex_);
    std::vector<Status> list;
    if (!name.empty()) {
      const auto it = regions_.find(key{owner, name});
      if (it == regions_.end()) throw request_error(error_status::not_found, unknown(name));
      list.push_back(it->second->status);
      return list;
    }
    const auto [first, last] = owned_by(owner);
    for (auto it = first; it != last; ++it) list.push_back(it->second->status);
    return list;
  }
  [[nodiscard]] bool contains(const std::string& owner, const std::string& name) const {
    const std::lock_guard lock(mutex_);
    return regions_.count(key{owner, name}) != 0;
  }
  // Every owner's regions together: the server's mappings, whoever holds them.
  [[nodiscard]] region_usage usage() const {
    const std::lock_guard lock(mutex_);
    return {regions_.size(), max_regions_};
  }
  // The region of `owner` a request names for `tensor`; not_found, naming both, when it has none.
  [[nodiscard]] std::shared_ptr<Region> find(const std::string& owner, const std::string& name,
                                             const std::string& tensor) const {
    const std::lock_guard lock(mutex_);
    const auto it = regions_.find(key{owner, name});
    if (it == regions_.end())
      throw request_error(error_status::not_found, tensor + ": " + kind_ + " '" + name + "' is not registered");
    return it->second;
  }

 private:
  using key = std::pair<std::string, std::string>;  // owner, name
  using map = std::map<key, std::shared_ptr<Region>>;

  // Under the lock: the owner's regions, one run of the map (keys sort by owner first).
  [[nodiscard]] std::pair<typename map::const_iterator, typename map::const_iterator> owned_by(
      const std::string& owner) const {
    const auto first = regions_.lower_bound(key{owner, std::string()});
    auto last = first;
    while (last != regions_.end() && last->first.first == owner) ++last;
    return {first, last};
  }
  // Under the lock.
  void check_room(const std::string& owner, const std::string& name) const {
    if (regions_.count(key{owner, name}) != 0)
      throw bad_request(kind_ + " '" + name + "' is already registered; unregister it first");
    if (regions_.size() >= max_regions_)
      throw request_error(error_status::quota_exceeded, "cannot register " + kind_ + " '" + name +
                                                            "': " + std::to_string(regions_.size()) + " " + kind_ +
                                                            "s are registered, this server's limit (" + limit_option_ +
                                                            "); unregister one first");
  }
  [[nodiscard]] std::string unknown(const std::string& name) const {
    return "no " + kind_ + " '" + name + "' is registered";
  }

  std::string kind_;
  std::size_t max_regions_;
  std::string limit_option_;
  mutable std::mutex mutex_;
  map regions_;
};

}  // namespace ferry::serve
