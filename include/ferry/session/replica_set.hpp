// One engine replica and one ferry::session per GPU, with requests spread over them.
//
// An engine's execution contexts live on one device, so each GPU gets its own engine, made by a
// factory with that GPU current (model engines take model_engine_options::device), and its own
// session made with that GPU's device_caps (buffers, streams and managed-memory hints on that
// GPU). The slots handed out are ferry::session's own typestate handles: a replica_set only
// decides which session a request goes to (placement_policy, placement.hpp):
//   acquire()          the least-loaded replica (fewest slots in use; ties round-robin);
//   acquire_on(device) data-following placement: the request's input already lives on `device`
//                      (CUDA shared memory from a client, managed pages resident there), so it
//                      runs there unless that GPU is full and another is idle.
// Both block until a slot is free and are thread-safe. Like a session, the set must outlive
// every slot handle it gave out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "ferry/device/device_caps.hpp"
#include "ferry/device/peer_access.hpp"
#include "ferry/engines/engine.hpp"
#include "ferry/session/session.hpp"

namespace ferry {

// Makes the engine replica for one GPU; called with that GPU current.
using engine_factory = std::function<std::unique_ptr<engine>(int device)>;

class replica_set {
 public:
  // One replica per entry of `devices` (distinct ordinals, at least one), each resolving `shapes`
  // on its own engine; every replica must resolve to the same concrete I/O. With two GPUs or
  // more, peer access is enabled between them where the topology allows (peer_links() says
  // where), so a request that runs away from its data copies it directly, not through the host. Throws
  // invalid_argument for an empty or repeated device list or replicas that disagree on the I/O,
  // and whatever session's constructor throws (unsupported strategy, buffers that cannot be made).
  replica_set(const std::vector<device_caps>& devices, const engine_factory& make_engine,
              std::span<const shape_binding> shapes, const session_options& options);
  ~replica_set();
  replica_set(const replica_set&) = delete;
  replica_set& operator=(const replica_set&) = delete;

  // A filling slot from the least-loaded replica; blocks until one has a free slot.
  [[nodiscard]] filling_slot acquire();
  // A filling slot for data that lives on `device` (see the header comment for when it runs
  // elsewhere). Throws invalid_argument when `device` is not in the set.
  [[nodiscard]] filling_slot acquire_on(int device);
  // Data-following placement for data the caller has not located: acquire_on the GPU that holds
  // [data, data+bytes) (data_location.hpp: device memory, managed pages prefetched there), and
  // acquire() when no GPU of the set holds it (host memory, pages on the CPU, another GPU), since
  // it must cross a link wherever the request runs.
  [[nodiscard]] filling_slot acquire_for(const void* data, std::size_t bytes);

  // Warms every replica's session (session::warmup).
  void warmup(int rounds = 3, const input_data& data = {});

  [[nodiscard]] std::size_t size() const noexcept;
  // The GPU ordinals, in the order given to the constructor (replica i runs on devices()[i]).
  [[nodiscard]] const std::vector<int>& devices() const noexcept;
  [[nodiscard]] session& replica(std::size_t index);
  [[nodiscard]] engine& engine_of(std::size_t index);
  // Index of the replica on `device`; throws invalid_argument when there is none.
  [[nodiscard]] std::size_t index_of(int device) const;
  // The concrete I/O every replica binds.
  [[nodiscard]] const std::vector<tensor_spec>& io() const noexcept;
  // Slots handed out so far by each replica, in replica order (how the load was spread).
  [[nodiscard]] std::vector<std::uint64_t> acquisitions() const;
  // Peer access between the set's GPUs, every ordered pair (empty for one GPU).
  [[nodiscard]] const std::vector<peer_link>& peer_links() const noexcept;

 private:
  [[nodiscard]] filling_slot acquire_with(std::optional<int> preferred_device);
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace ferry
