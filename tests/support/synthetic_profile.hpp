// Synthetic device records and profiles for the four platform classes, so the choices and texts
// built on them can be checked without a GPU. The figures are a cost model (a fixed cost plus
// bytes over a rate per strategy and use), shaped like each platform moves bytes, not measurements.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "ferry/device/device_caps.hpp"
#include "ferry/memory/profile.hpp"
#include "support/synthetic_caps.hpp"

namespace ferry::testing {

inline device_caps with_identity(device_caps caps, std::string uuid) {
  caps.uuid = std::move(uuid);
  caps.driver_version = 13000;
  caps.runtime_version = 13000;
  return caps;
}

inline device_caps discrete_pcie_caps() {
  return with_identity(h200_like(), "GPU-00000000-0000-0000-0000-000000000001");
}

// Jetson-like: shared DRAM, integrated=1, concurrentManagedAccess=0.
inline device_caps integrated_caps() { return with_identity(orin_like(), "GPU-00000000-0000-0000-0000-000000000002"); }

// Grace-Hopper-like: pageableMemoryAccessUsesHostPageTables=1 over NVLink-C2C.
inline device_caps ats_caps() {
  auto caps = with_identity(h200_like(), "GPU-00000000-0000-0000-0000-000000000003");
  caps.name = "NVIDIA GH200";
  caps.pageable_memory_access = true;
  caps.pageable_memory_access_uses_host_page_tables = true;
  caps.direct_managed_mem_access_from_host = true;
  caps.pcie.reset();
  return caps;
}

// A discrete GPU whose driver offers HMM: pageableMemoryAccess=1 without host page tables.
inline device_caps hmm_caps() {
  auto caps = with_identity(h200_like(), "GPU-00000000-0000-0000-0000-000000000004");
  caps.pageable_memory_access = true;
  return caps;
}

// Microseconds of one request: fixed cost + bytes / (GB/s * 1000).
struct cost {
  double fixed_us;
  double gbps;  // 0: the strategy is refused
  [[nodiscard]] double at(std::size_t bytes) const { return fixed_us + static_cast<double>(bytes) / (gbps * 1e3); }
};

using cost_model = std::function<cost(strategy_kind, transfer_use)>;

inline device_profile synthetic_profile(const device_caps& caps, const cost_model& model) {
  device_profile p;
  p.gpu_uuid = caps.uuid;
  p.gpu_name = caps.name;
  p.driver_version = caps.driver_version;
  p.link = describe_link(caps);
  p.platform = classify(caps);
  p.date = "2026-11-30T12:00:00Z";
  p.host = "testhost";
  p.mode = "quick";
  for (const strategy_kind k : all_strategies) {
    if (properties(k).path == data_path::resident) continue;  // as calibrate: not a way to feed host inputs
    for (const transfer_use use : all_transfer_uses) {
      strategy_curve curve{.strategy = k, .use = use, .refused = {}, .points = {}};
      if (const auto why = unavailable_reason(k, caps)) {
        curve.refused = *why;
      } else {
        const cost c = model(k, use);
        for (const std::size_t bytes :
             {std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{16} << 20, std::size_t{256} << 20})
          curve.points.push_back({bytes, c.at(bytes), 0.01});
      }
      p.curves.push_back(std::move(curve));
    }
  }
  p.inflight.push_back({strategy_kind::pinned, std::size_t{1} << 20, 3, "inflight auto: 3 slots"});
  return p;
}

// PCIe: copies at the link's rate once; zero-copy ties for read-once but pays every re-read; the
// CPU reading managed outputs is slow; pageable and fault-driven managed are several times slower.
inline cost discrete_model(strategy_kind k, transfer_use use) {
  using enum strategy_kind;
  switch (k) {
    case pinned:
      return {20, 50};
    case registered:
      return {22, 50};
    case staged:
      return {25, 20};
    case pageable:
      return {30, 8};
    case mapped:
    case managed_advise:
      return use == transfer_use::input_reread ? cost{18, 12} : cost{18, 48};
    case registered_mapped:
      return use == transfer_use::input_reread ? cost{19, 12} : cost{19, 48};
    case managed:
      return {60, 7};
    case managed_prefetch:
      return use == transfer_use::output ? cost{40, 6} : cost{30, 40};
    case system:
      return {80, 5};
    case device:
      break;
  }
  return {0, 1};
}

// Shared DRAM: nothing to move, so zero-copy is cheapest and every copy is overhead.
inline cost integrated_model(strategy_kind k, transfer_use) {
  using enum strategy_kind;
  switch (k) {
    case mapped:
      return {10, 100};
    case registered_mapped:
      return {11, 100};
    case pinned:
    case registered:
      return {15, 30};
    case staged:
      return {20, 15};
    case pageable:
      return {25, 10};
    default:
      return {50, 5};
  }
}

// ATS over NVLink-C2C: the GPU reads malloc'd memory in place, faster than any copy.
inline cost ats_model(strategy_kind k, transfer_use use) {
  using enum strategy_kind;
  switch (k) {
    case system:
      return {8, use == transfer_use::input_reread ? 300.0 : 400.0};
    case managed_advise:
      return {9, 380};
    case mapped:
    case registered_mapped:
      return {10, 300};
    case pinned:
    case registered:
      return {15, 200};
    case staged:
      return {20, 60};
    case pageable:
      return {20, 50};
    case managed:
    case managed_prefetch:
      return {25, 150};
    case device:
      break;
  }
  return {0, 1};
}

// HMM: 'system' faults page by page over PCIe; the discrete picture otherwise.
inline cost hmm_model(strategy_kind k, transfer_use use) {
  if (k == strategy_kind::system) return {90, 4};
  return discrete_model(k, use);
}

}  // namespace ferry::testing
