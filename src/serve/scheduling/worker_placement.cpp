#include "serve/scheduling/worker_placement.hpp"

#include <algorithm>
#include <iterator>

namespace ferry::serve {

worker_placement::worker_placement(const executor& exec) {
  const int n = exec.workers();
  for (int i = 0; i < n; ++i) {
    const std::optional<int> device = exec.worker_device(i);
    auto found = std::find(group_devices_.begin(), group_devices_.end(), device);
    if (found == group_devices_.end()) {
      group_devices_.push_back(device);
      loads_.push_back({.device = device.value_or(-1), .busy = 0, .total = 0});
      running_.push_back(0);
      waiting_.push_back(0);
      wake_.emplace_back();
      if (device) gpus_.push_back(*device);
      found = std::prev(group_devices_.end());
    }
    group_of_.push_back(static_cast<std::size_t>(found - group_devices_.begin()));
    // Busy until its thread first waits for work.
    ++loads_[group_of_.back()].total;
    ++loads_[group_of_.back()].busy;
  }
}

std::optional<std::size_t> worker_placement::group_for_unplaced() const {
  if (loads_.empty()) return std::nullopt;
  return placement_.peek(loads_);
}

bool worker_placement::may_run(std::size_t g, const scheduled_request& r,
                               std::optional<std::size_t> unplaced_group) const {
  return r.gpu ? group_devices_[g] == r.gpu : unplaced_group == g;
}

// A woken worker that finds nothing waits again without waking anyone.
void worker_placement::offer(const request_queue& queue) {
  const auto unplaced = group_for_unplaced();
  const request_queue::entries& waiting = queue.waiting();
  for (std::size_t g = 0; g < loads_.size(); ++g) {
    if (loads_[g].busy == loads_[g].total) continue;  // no idle worker
    if (std::any_of(waiting.begin(), waiting.end(), [&](const auto& r) { return may_run(g, *r, unplaced); }))
      wake_[g].notify_one();
  }
}

void worker_placement::wait(std::size_t g, std::unique_lock<std::mutex>& lock, std::optional<steady_time> until) {
  ++waiting_[g];
  if (until)
    wake_[g].wait_until(lock, *until);
  else
    wake_[g].wait(lock);
  --waiting_[g];
}

void worker_placement::wake_all() {
  for (auto& w : wake_) w.notify_all();
}

void worker_placement::worker_waiting(std::size_t g) { --loads_[g].busy; }

void worker_placement::batch_started(std::size_t g, std::size_t requests) {
  ++loads_[g].busy;
  running_[g] += requests;
  placement_.taken(g, loads_.size());
}

void worker_placement::batch_run(std::size_t g) { --loads_[g].busy; }

void worker_placement::batch_answered(std::size_t g, std::size_t requests) { running_[g] -= requests; }

bool worker_placement::none_running() const {
  return std::all_of(running_.begin(), running_.end(), [](std::size_t n) { return n == 0; });
}

std::vector<std::pair<std::optional<int>, std::size_t>> worker_placement::running() const {
  std::vector<std::pair<std::optional<int>, std::size_t>> list;
  for (std::size_t g = 0; g < group_devices_.size(); ++g) list.emplace_back(group_devices_[g], running_[g]);
  return list;
}

}  // namespace ferry::serve
