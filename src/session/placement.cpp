#include "ferry/session/placement.hpp"

#include <string>

#include "ferry/core/error.hpp"

namespace ferry {

namespace {
void require_consistent(std::span<const replica_load> loads) {
  if (loads.empty()) throw invalid_argument("placement: no replicas to choose from");
  for (const auto& l : loads)
    if (l.total < 1 || l.busy < 0 || l.busy > l.total)
      throw invalid_argument("placement: replica on GPU " + std::to_string(l.device) + " reports " +
                             std::to_string(l.busy) + " of " + std::to_string(l.total) + " slots in use");
}

bool has_free_slot(const replica_load& l) { return l.busy < l.total; }
}  // namespace

std::optional<std::size_t> placement_policy::pick(std::span<const replica_load> loads,
                                                  std::optional<int> preferred_device) {
  const auto best = peek(loads, preferred_device);
  // Rule 1 runs where the data is, out of turn: the round-robin moves only on load-spread picks.
  const bool where_data_is = best && preferred_device && loads[*best].device == *preferred_device;
  if (best && !where_data_is) taken(*best, loads.size());
  return best;
}

void placement_policy::taken(std::size_t index, std::size_t replicas) noexcept {
  if (replicas > 0) next_ = (index + 1) % replicas;
}

std::optional<std::size_t> placement_policy::peek(std::span<const replica_load> loads,
                                                  std::optional<int> preferred_device) const {
  require_consistent(loads);
  const std::size_t n = loads.size();
  bool only_idle = false;
  if (preferred_device) {
    std::optional<std::size_t> preferred;
    for (std::size_t i = 0; i < n; ++i)
      if (loads[i].device == *preferred_device) preferred = i;
    if (!preferred)
      throw invalid_argument("placement: GPU " + std::to_string(*preferred_device) + " has no replica in this set");
    if (has_free_slot(loads[*preferred])) return preferred;  // rule 1
    only_idle = true;                                        // rule 2
  }
  // Rule 3: the least busy eligible replica, searching from next_ so ties rotate.
  std::optional<std::size_t> best;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = (next_ + k) % n;
    const auto& l = loads[i];
    if (!has_free_slot(l) || (only_idle && l.busy != 0)) continue;
    if (!best || l.busy < loads[*best].busy) best = i;
  }
  return best;  // nullopt: rule 4
}

}  // namespace ferry
