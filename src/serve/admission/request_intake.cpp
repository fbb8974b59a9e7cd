#include "serve/admission/request_intake.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <utility>

namespace ferry::serve {

intake_ticket::intake_ticket(intake_ticket&& other) noexcept
    : intake_(std::exchange(other.intake_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      group_(std::move(other.group_)),
      in_flight_(std::exchange(other.in_flight_, true)) {}

intake_ticket& intake_ticket::operator=(intake_ticket&& other) noexcept {
  if (this != &other) {
    release();
    intake_ = std::exchange(other.intake_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    group_ = std::move(other.group_);
    in_flight_ = std::exchange(other.in_flight_, true);
  }
  return *this;
}

bool intake_ticket::grow(std::size_t more) {
  if (intake_ == nullptr || !intake_->take(more, group_)) return false;
  bytes_ += more;
  return true;
}

std::string intake_ticket::no_room_message(std::size_t more) const {
  return intake_ == nullptr ? std::string() : intake_->no_room_message(more, group_);
}

void intake_ticket::resize(std::size_t bytes) {
  if (intake_ == nullptr) return;
  intake_->adjust(bytes_, bytes, group_);
  bytes_ = bytes;
}

void intake_ticket::answered() {
  if (intake_ == nullptr || !std::exchange(in_flight_, false)) return;
  intake_->end_request();
}

void intake_ticket::release() {
  if (intake_ == nullptr) return;
  request_intake* intake = std::exchange(intake_, nullptr);
  intake->give_back(std::exchange(bytes_, 0), group_);
  if (std::exchange(in_flight_, true)) intake->end_request();
  group_.clear();
}

request_intake::request_intake(std::size_t budget_bytes) : budget_(std::max<std::size_t>(1, budget_bytes)) {}

std::size_t request_intake::peer_share_bytes() const noexcept {
  const std::size_t set = peer_share_.load();
  return set > 0 ? std::min(set, admissible_bytes()) : std::max<std::size_t>(1, admissible_bytes() / 4);
}

void request_intake::set_peer_share(std::size_t bytes) { peer_share_ = bytes; }

std::size_t request_intake::largest_request(std::string_view group) const {
  return group.empty() ? admissible_bytes() : std::min(admissible_bytes(), peer_share_bytes());
}

std::string request_intake::too_large_message(std::size_t bytes, std::string_view group) const {
  const std::string request = "request of " + std::to_string(bytes) + " bytes exceeds ";
  if (bytes <= admissible_bytes() && !group.empty())
    return request + "what one client network (" + std::string(group) +
           ") may hold of the in-flight budget at once: " + std::to_string(peer_share_bytes()) +
           " bytes (--max-inflight-bytes-per-peer)";
  return request + "the server's in-flight memory budget of " + std::to_string(admissible_bytes()) +
         " bytes (--max-inflight-bytes" +
         (set_aside_ > 0 ? ", less the " + std::to_string(set_aside_.load()) + " kept for gRPC messages arriving)"
                         : std::string(")"));
}

std::string request_intake::no_room_locked(std::size_t bytes, std::string_view group) const {
  const bool budget_full = bytes > admissible_bytes() - std::min(in_use_, admissible_bytes());
  if (!budget_full && !by_peer_.fits(group, bytes, peer_share_bytes()))
    return "client network " + std::string(group) + " holds " + std::to_string(by_peer_.held(group)) +
           " bytes of the in-flight budget, and may hold " + std::to_string(peer_share_bytes()) + " at once; these " +
           std::to_string(bytes) + " more do not fit: try again shortly";
  return "the server's in-flight memory budget of " + std::to_string(admissible_bytes()) + " bytes holds " +
         std::to_string(in_use_) + " bytes of " + std::to_string(requests_) + " requests; these " +
         std::to_string(bytes) + " more do not fit: try again shortly";
}

std::string request_intake::no_room_message(std::size_t bytes, std::string_view group) const {
  const std::lock_guard lock(mutex_);
  return no_room_locked(bytes, group);
}

request_intake::admission request_intake::admit(std::size_t bytes, std::string group, std::size_t announced) {
  admission a;
  const std::size_t needed = std::max(bytes, announced);
  const std::lock_guard lock(mutex_);
  if (draining_) {
    a.refusal = intake_refusal::draining;
    a.message = "the server is shutting down and takes no new requests";
  } else if (needed > largest_request(group)) {
    a.refusal = intake_refusal::too_large;
    a.message = too_large_message(needed, group);
  } else if (needed > admissible_bytes() - std::min(in_use_, admissible_bytes()) ||
             !by_peer_.fits(group, needed, peer_share_bytes())) {
    a.refusal = intake_refusal::over_budget;
    a.message = no_room_locked(needed, group);
  } else {
    in_use_ += bytes;
    by_peer_.add(group, bytes);
    ++requests_;
    a.ticket = intake_ticket(this, bytes, std::move(group));
  }
  return a;
}

void request_intake::set_aside(std::size_t bytes) {
  const std::lock_guard lock(mutex_);
  set_aside_ = std::min(bytes, budget_ / 2);
}

bool request_intake::take(std::size_t bytes, std::string_view group) {
  const std::lock_guard lock(mutex_);
  if (bytes > admissible_bytes() - std::min(in_use_, admissible_bytes()) ||
      !by_peer_.fits(group, bytes, peer_share_bytes()))
    return false;
  in_use_ += bytes;
  by_peer_.add(group, bytes);
  return true;
}

void request_intake::adjust(std::size_t from, std::size_t to, std::string_view group) {
  const std::lock_guard lock(mutex_);
  in_use_ = in_use_ - from + to;
  by_peer_.remove(group, from);
  by_peer_.add(group, to);
}

void request_intake::give_back(std::size_t bytes, std::string_view group) {
  const std::lock_guard lock(mutex_);
  in_use_ -= bytes;
  by_peer_.remove(group, bytes);
}

void request_intake::end_request() {
  bool now_idle = false;
  {
    const std::lock_guard lock(mutex_);
    now_idle = --requests_ == 0;
    if (now_idle) idle_.notify_all();
  }
  if (now_idle && on_idle_) on_idle_();
}

std::size_t request_intake::peer_bytes_in_use(std::string_view group) const {
  const std::lock_guard lock(mutex_);
  return by_peer_.held(group);
}

void request_intake::begin_draining() {
  const std::lock_guard lock(mutex_);
  draining_ = true;
}

bool request_intake::draining() const {
  const std::lock_guard lock(mutex_);
  return draining_;
}

void request_intake::wait_until_idle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return requests_ == 0; });
}

std::size_t request_intake::bytes_in_use() const {
  const std::lock_guard lock(mutex_);
  return in_use_;
}

std::size_t request_intake::requests_in_flight() const {
  const std::lock_guard lock(mutex_);
  return requests_;
}

namespace {

// The cgroup (v2, then v1) memory limit of this process, if it has one.
std::optional<std::size_t> cgroup_memory_limit() {
  for (const char* file : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(file);
    std::string text;
    if (!(in >> text) || text == "max") continue;
    try {
      return static_cast<std::size_t>(std::stoull(text));
    } catch (const std::exception&) {
      continue;  // not a number: no limit read from it
    }
  }
  return std::nullopt;
}

}  // namespace

std::size_t default_inflight_budget() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_bytes = ::sysconf(_SC_PAGESIZE);
  std::size_t memory = pages > 0 && page_bytes > 0
                           ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_bytes)
                           : std::size_t{4} << 30;
  if (const auto limit = cgroup_memory_limit()) memory = std::min(memory, *limit);
  return std::max<std::size_t>(memory / 8, std::size_t{256} << 20);
}

}  // namespace ferry::serve
