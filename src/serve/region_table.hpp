// The named, thread-safe table of registered regions that both shared-memory extensions keep
// (system and CUDA): registration, unregistration, status and lookup by name, with the same
// messages for both, apart from what the region is called ("shared-memory region", "CUDA
// shared-memory region"). A request pins the region it reads (shared_ptr), so unregistering
// never unmaps memory a request still uses.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "serve/request_error.hpp"

namespace ferry::serve {

// Region must have a `status` member of type Status.
template <class Region, class Status>
class region_table {
 public:
  explicit region_table(std::string kind) : kind_(std::move(kind)) {}

  // Throws bad_request when `name` is taken: checked before the costly mapping, and again on insert.
  void check_free(const std::string& name) const {
    const std::lock_guard lock(mutex_);
    if (regions_.count(name) != 0) throw bad_request(taken(name));
  }
  void insert(const std::string& name, std::shared_ptr<Region> r) {
    const std::lock_guard lock(mutex_);
    if (!regions_.emplace(name, std::move(r)).second) throw bad_request(taken(name));
  }
  void erase(const std::string& name) {
    const std::lock_guard lock(mutex_);
    if (regions_.erase(name) == 0) throw request_error(error_status::not_found, unknown(name));
  }
  void clear() {
    const std::lock_guard lock(mutex_);
    regions_.clear();
  }
  // Every region's status, or the named one's (not_found when unknown).
  [[nodiscard]] std::vector<Status> status(const std::string& name) const {
    const std::lock_guard lock(mutex_);
    std::vector<Status> list;
    if (!name.empty()) {
      const auto it = regions_.find(name);
      if (it == regions_.end()) throw request_error(error_status::not_found, unknown(name));
      list.push_back(it->second->status);
      return list;
    }
    for (const auto& [n, r] : regions_) list.push_back(r->status);
    return list;
  }
  [[nodiscard]] bool contains(const std::string& name) const {
    const std::lock_guard lock(mutex_);
    return regions_.count(name) != 0;
  }
  // The region a request names for `tensor`; not_found, naming both, when it is not registered.
  [[nodiscard]] std::shared_ptr<Region> find(const std::string& name, const std::string& tensor) const {
    const std::lock_guard lock(mutex_);
    const auto it = regions_.find(name);
    if (it == regions_.end())
      throw request_error(error_status::not_found, tensor + ": " + kind_ + " '" + name + "' is not registered");
    return it->second;
  }

 private:
  [[nodiscard]] std::string taken(const std::string& name) const {
    return kind_ + " '" + name + "' is already registered; unregister it first";
  }
  [[nodiscard]] std::string unknown(const std::string& name) const {
    return "no " + kind_ + " '" + name + "' is registered";
  }

  std::string kind_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Region>> regions_;
};

}  // namespace ferry::serve
