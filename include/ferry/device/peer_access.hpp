// GPU-to-GPU access on a multi-GPU host: which pairs can reach each other's memory directly
// (cudaDeviceCanAccessPeer), turning that access on, and the measured peer copy bandwidth, which
// is the price of running a request on another GPU than the one holding its data.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ferry {

// cudaMemcpyPeerAsync bandwidth one way, 1 GB = 1e9 bytes as link speeds are quoted.
struct peer_bandwidth {
  double gbps_median = 0;
  double gbps_best = 0;
  std::size_t bytes = 0;  // per copy
  int repetitions = 0;    // timed copies
};

// One ordered pair: `from` reads or writes `to`'s memory.
struct peer_link {
  int from = 0;
  int to = 0;
  bool can_access = false;                  // cudaDeviceCanAccessPeer(from, to)
  bool enabled = false;                     // peer access from `from` to `to` is on (enabled here or before)
  std::string error;                        // why enabling failed, where it did; empty otherwise
  std::optional<peer_bandwidth> bandwidth;  // copies from `from` to `to`, when measured
};

// For every ordered pair of distinct `devices`: asks cudaDeviceCanAccessPeer and, where allowed,
// enables peer access from the first to the second (idempotent: access that is already on counts
// as enabled). A pair that cannot access each other is reported, not an error: copies between
// them still work, staged through host memory by the driver. Throws no_device/invalid_argument
// for devices that do not exist.
[[nodiscard]] std::vector<peer_link> enable_peer_access(std::span<const int> devices);

struct peer_bandwidth_options {
  std::size_t bytes = std::size_t{256} << 20;  // clamped to a quarter of either GPU's free memory
  int warmup_copies = 2;
  int repetitions = 10;
};

// Times cudaMemcpyPeerAsync copies from device `from` to device `to` on a non-blocking stream of
// `from`, one event pair per copy (as link_bandwidth.hpp does for the host link). Blocks until
// done. Throws invalid_argument for from == to or a missing device, unsupported when too little
// memory is free on either GPU, cuda_error/out_of_memory from CUDA.
[[nodiscard]] peer_bandwidth measure_peer_bandwidth_blocking(int from, int to,
                                                             const peer_bandwidth_options& options = {});

}  // namespace ferry
