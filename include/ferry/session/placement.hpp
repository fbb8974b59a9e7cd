// Which replica takes the next request: the one load-spreading rule, of replica_set (sessions on
// several GPUs) and of the server's scheduler (worker groups on several GPUs), kept pure so it is
// tested on the CPU with synthetic loads.
//
// The rule, for per-replica loads (slots in use out of slots in total) and an optional preferred
// device (the GPU that already holds the request's data):
//   1. A preferred replica with a free slot wins: running where the data is avoids a cross-GPU
//      copy, and costs nothing while that GPU can still take work.
//   2. A preferred replica that is full yields only to an idle replica (no slot in use): an idle
//      GPU is lost throughput, worth a peer copy. A busy-but-not-full one is not worth it, so
//      the request waits for its own GPU.
//   3. Without a preference (or after 2.), the least-loaded replica with a free slot: fewest slots
//      in use; ties go round-robin, starting after the replica picked last, so equal replicas
//      take turns instead of the first one taking everything.
//   4. No eligible replica has a free slot: no pick; the caller waits for a slot to be released
//      and asks again.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace ferry {

struct replica_load {
  int device = 0;  // the GPU ordinal of the replica
  int busy = 0;    // slots handed out and not yet returned
  int total = 0;   // slots the replica has
};

class placement_policy {
 public:
  // The index (into `loads`) of the replica to take a slot from, or nullopt to wait (rule 4).
  // Throws invalid_argument when `loads` is empty, a load is inconsistent (busy outside
  // [0, total], total < 1), or the preferred device is not one of the replicas'.
  [[nodiscard]] std::optional<std::size_t> pick(std::span<const replica_load> loads,
                                                std::optional<int> preferred_device = std::nullopt);
  // What pick() would answer, leaving the turn as it is: for a caller that asks again and again
  // before a request is actually taken (a scheduler's workers re-reading their queue), and then
  // says which replica took one with taken(). Same errors as pick().
  [[nodiscard]] std::optional<std::size_t> peek(std::span<const replica_load> loads,
                                                std::optional<int> preferred_device = std::nullopt) const;
  // Replica `index` of `replicas` took a request: the round-robin for ties starts after it.
  void taken(std::size_t index, std::size_t replicas) noexcept;

 private:
  std::size_t next_ = 0;  // where the round-robin search for a tie starts
};

}  // namespace ferry
