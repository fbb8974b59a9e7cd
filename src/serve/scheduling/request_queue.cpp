#include "serve/scheduling/request_queue.hpp"

#include <algorithm>
#include <utility>

namespace ferry::serve {

std::optional<steady_time> deadline_after(steady_time arrived, std::optional<std::chrono::microseconds> timeout) {
  if (timeout &&
      timeout->count() < std::chrono::duration_cast<std::chrono::microseconds>(steady_time::max() - arrived).count())
    return arrived + *timeout;
  return std::nullopt;
}

bool request_queue::push(std::unique_ptr<scheduled_request> r, std::optional<steady_time> deadline) {
  bool wake = false;
  if (deadline) {
    r->deadline = deadlines_.emplace(*deadline, r.get());
    wake = *deadline < deadline_wake_;
  }
  queue_.push_back(std::move(r));
  return wake;
}

std::vector<std::unique_ptr<scheduled_request>> request_queue::take(std::span<const std::size_t> positions) {
  std::vector<std::unique_ptr<scheduled_request>> taken;
  taken.reserve(positions.size());
  for (const std::size_t i : positions) {
    auto& r = queue_[i];
    if (r->deadline) deadlines_.erase(*std::exchange(r->deadline, std::nullopt));
    taken.push_back(std::move(r));
  }
  std::erase(queue_, nullptr);
  return taken;
}

request_queue::entries request_queue::take_all() {
  entries all;
  all.swap(queue_);
  deadlines_.clear();
  for (auto& r : all) r->deadline.reset();
  return all;
}

std::optional<steady_time> request_queue::first_deadline() const {
  if (deadlines_.empty()) return std::nullopt;
  return deadlines_.begin()->first;
}

std::vector<std::unique_ptr<scheduled_request>> request_queue::withdraw_expired(steady_time now) {
  std::vector<std::unique_ptr<scheduled_request>> late;
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    scheduled_request* const r = deadlines_.begin()->second;
    deadlines_.erase(deadlines_.begin());
    r->deadline.reset();
    const auto it = std::find_if(queue_.begin(), queue_.end(), [r](const auto& q) { return q.get() == r; });
    late.push_back(std::move(*it));
    queue_.erase(it);
  }
  return late;
}

}  // namespace ferry::serve
