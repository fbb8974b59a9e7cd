// Peak pinned-copy bandwidth between the host and one GPU: the "link peak" that effective
// transfer rates are compared against (docs/ARCHITECTURE.md §5).
#pragma once

#include <cstddef>

namespace ferry {

// Measured pinned copy bandwidth, both ways. 1 GB = 1e9 bytes, as link speeds are quoted.
struct link_bandwidth {
  double h2d_gbps_median = 0;
  double h2d_gbps_best = 0;
  double d2h_gbps_median = 0;
  double d2h_gbps_best = 0;
  std::size_t bytes = 0;  // per copy
  int repetitions = 0;    // timed copies per direction
};

struct link_bandwidth_options {
  // Large enough that per-copy launch and event overheads vanish (a 256 MiB copy lasts
  // milliseconds on the fastest links); clamped to a quarter of the device's free memory so a
  // busy card is not starved.
  std::size_t bytes = std::size_t{256} << 20;
  int warmup_copies = 3;  // the first copies pay for TLB and IOMMU mappings; not timed
  int repetitions = 20;
};

// Times pinned (cudaMallocHost) <-> device copies on a non-blocking stream of device `ordinal`
// with CUDA events, one event pair per copy. Blocks until done (well under a second on PCIe).
// Throws no_device/invalid_argument for a missing device, unsupported when too little device
// memory is free to measure anything meaningful, and cuda_error/out_of_memory from CUDA.
[[nodiscard]] link_bandwidth measure_link_bandwidth_blocking(int ordinal, const link_bandwidth_options& options = {});

}  // namespace ferry
