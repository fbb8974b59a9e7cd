// peer: inputs and outputs in another GPU's device memory, read and written by the engine over
// peer access (NVLink or PCIe): a pipeline whose previous stage ran on another GPU hands its
// results over where they are. Like `device`, the data is where the engine reads it by
// definition, copied there outside any timing; the figure beside device's is what reading over
// the peer link costs. Refused on a machine of one GPU and where no other GPU's memory can be
// reached by peer access.
#include <cuda_runtime_api.h>

#include "core/device_memory.hpp"
#include "core/pinned_memory.hpp"
#include "ferry/core/error.hpp"
#include "memory/host_flags.hpp"
#include "memory/strategies/peer/peer_buffer.hpp"
#include "memory/strategies/peer/peer_by_hand.hpp"
#include "memory/strategy_type.hpp"

namespace ferry::memory::strategies {
namespace {

// The GPU whose memory holds the data: the lowest-numbered one the buffer's GPU can reach.
int peer_of(const device_caps& caps) { return caps.peer_ordinals.front(); }

std::string other_gpus(const device_caps& caps) {
  std::string list;
  for (int i = 0; i < caps.device_count; ++i)
    if (i != caps.ordinal) list += (list.empty() ? "" : ", ") + std::to_string(i);
  return list;
}

// Lets the current GPU (the buffer's) read and write `peer`'s memory; on already is what is wanted.
void enable_access_to(int peer, const device_caps& caps) {
  const cudaError_t status = cudaDeviceEnablePeerAccess(peer, 0);
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();  // not a sticky error: clear it so the next unrelated call does not see it
  if (status == cudaErrorPeerAccessAlreadyEnabled) return;
  throw unsupported("strategy 'peer': GPU " + std::to_string(caps.ordinal) + " could not be given access to GPU " +
                    std::to_string(peer) + "'s memory: cudaDeviceEnablePeerAccess: " + cudaGetErrorName(status) + " (" +
                    cudaGetErrorString(status) + ")");
}

class peer_strategy final : public strategy_type {
 public:
  peer_strategy()
      : strategy_type("peer", {.path = data_path::resident,
                               .reads_in_place = true,
                               .summary = "another GPU's device memory, read and written by the engine over peer "
                                          "access; copied there outside timing"}) {}

  [[nodiscard]] std::optional<std::string> unavailable_reason(const device_caps& caps) const override {
    if (caps.device_count < 2)
      return "this machine has one GPU, and peer keeps inputs and outputs in another GPU's memory";
    if (caps.peer_ordinals.empty())
      return "GPU " + std::to_string(caps.ordinal) + " cannot access the memory of GPU " + other_gpus(caps) +
             " by peer (cudaDeviceCanAccessPeer=0)";
    return std::nullopt;
  }

  [[nodiscard]] std::unique_ptr<buffer_body> allocate(const buffer_request& request,
                                                      const device_caps& caps) const override {
    const int peer = peer_of(caps);
    enable_access_to(peer, caps);
    return make_body(
        peer_buffer(core::allocate_pinned(request.bytes, pinned_flags), core::allocate_device(request.bytes, peer)));
  }

  [[nodiscard]] std::string_view recipe_steps() const noexcept override {
    return "engine on inputs already in another GPU's memory, read over peer access, synchronize";
  }

  [[nodiscard]] std::unique_ptr<tensor_by_hand> by_hand_tensor(std::size_t bytes, direction /*dir*/,
                                                               const device_caps& caps) const override {
    return std::make_unique<peer_tensor_by_hand>(bytes, peer_of(caps));
  }
};

}  // namespace

const strategy_type& peer() {
  static const peer_strategy type;
  return type;
}

}  // namespace ferry::memory::strategies
