#include "serve/admission/request_intake.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <utility>

namespace ferry::serve {

intake_ticket::intake_ticket(intake_ticket&& other) noexcept
    : intake_(std::exchange(other.intake_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

intake_ticket& intake_ticket::operator=(intake_ticket&& other) noexcept {
  if (this != &other) {
    release();
    intake_ = std::exchange(other.intake_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

bool intake_ticket::grow(std::size_t more) {
  if (intake_ == nullptr || !intake_->take(more)) return false;
  bytes_ += more;
  return true;
}

void intake_ticket::resize(std::size_t bytes) {
  if (intake_ == nullptr) return;
  intake_->adjust(bytes_, bytes);
  bytes_ = bytes;
}

void intake_ticket::release() {
  if (intake_ == nullptr) return;
  std::exchange(intake_, nullptr)->end(std::exchange(bytes_, 0));
}

request_intake::request_intake(std::size_t budget_bytes) : budget_(std::max<std::size_t>(1, budget_bytes)) {}

request_intake::admission request_intake::admit(std::size_t bytes) {
  admission a;
  const std::lock_guard lock(mutex_);
  if (draining_) {
    a.refusal = intake_refusal::draining;
    a.message = "the server is shutting down and takes no new requests";
  } else if (bytes > admissible_bytes()) {
    a.refusal = intake_refusal::too_large;
    a.message =
        "request of " + std::to_string(bytes) + " bytes exceeds the server's in-flight memory budget of " +
        std::to_string(admissible_bytes()) + " bytes (--max-inflight-bytes" +
        (set_aside_ > 0 ? ", less the " + std::to_string(set_aside_.load()) + " kept for gRPC messages arriving)"
                        : std::string(")"));
  } else if (bytes > admissible_bytes() - std::min(in_use_, admissible_bytes())) {
    a.refusal = intake_refusal::over_budget;
    a.message = "the server's in-flight memory budget of " + std::to_string(admissible_bytes()) + " bytes holds " +
                std::to_string(in_use_) + " bytes of " + std::to_string(requests_) + " requests; this one of " +
                std::to_string(bytes) + " bytes does not fit: try again shortly";
  } else {
    in_use_ += bytes;
    ++requests_;
    a.ticket = intake_ticket(this, bytes);
  }
  return a;
}

void request_intake::set_aside(std::size_t bytes) {
  const std::lock_guard lock(mutex_);
  set_aside_ = std::min(bytes, budget_ / 2);
}

bool request_intake::take(std::size_t bytes) {
  const std::lock_guard lock(mutex_);
  if (bytes > admissible_bytes() - std::min(in_use_, admissible_bytes())) return false;
  in_use_ += bytes;
  return true;
}

void request_intake::adjust(std::size_t from, std::size_t to) {
  const std::lock_guard lock(mutex_);
  in_use_ = in_use_ - from + to;
}

void request_intake::end(std::size_t bytes) {
  bool now_idle = false;
  {
    const std::lock_guard lock(mutex_);
    in_use_ -= bytes;
    now_idle = --requests_ == 0;
    if (now_idle) idle_.notify_all();
  }
  if (now_idle && on_idle_) on_idle_();
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
