// What `ferry info` reports: per GPU its capabilities, platform class, which strategies work
// (and why not), what was measured on this machine (its profile) or else the platform rules,
// labelled as not measured here, and optionally the measured link peak.
//
// The report is built as JSON (the machine-readable record) from plain device_caps records, so
// it is testable on synthetic records without a GPU; the text rendering is derived from that
// JSON, so both always say the same thing.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ferry/device/device_caps.hpp"
#include "ferry/device/link_bandwidth.hpp"
#include "ferry/device/peer_access.hpp"
#include "ferry/memory/profile.hpp"

namespace ferry {

// CUDA versions as the API reports them (1000 * major + 10 * minor; 13000 is 13.0). The driver's
// is the newest CUDA version the installed driver supports, 0 when no driver is installed.
struct cuda_versions {
  int driver = 0;
  int runtime = 0;
};

// cudaDriverGetVersion and cudaRuntimeGetVersion; works without a GPU.
[[nodiscard]] cuda_versions query_cuda_versions();

// "13.0" from 13000.
[[nodiscard]] std::string format_cuda_version(int version);

// Link measurements keyed by device ordinal; a device without an entry was not measured.
using link_measurements = std::map<int, link_bandwidth>;

// Profile lookups keyed by device ordinal; a device without an entry was not looked up.
using profile_lookups = std::map<int, profile_lookup>;

// The info record:
// {
//   "cuda": {"driver": "13.0", "runtime": "13.0"},
//   "devices": [{
//     "ordinal", "name", "compute_capability": "9.0", "multiprocessors",
//     "total_memory_bytes", "free_memory_bytes", "pci_bus_id", "uuid",
//     "capabilities": {"integrated": bool, "can_map_host_memory": bool, ...every device_caps flag},
//     "pcie": {"current_generation", "current_width", "max_generation", "max_width"} | null,
//     "platform_class": "discrete-pcie",
//     "strategies": [{"name", "available": bool, "reason": string | null}, ...all_strategies],
//     "recommendation": {"recommended", "alternatives": [..], "avoid": [..], "in_flight_slots",
//                        "reasoning", "source": "platform rules, not measured on this machine"},
//     "profile": {"status": "loaded" | "missing" | "stale" | "corrupt", "path", "message",
//                 when loaded also: "date", "host", "link", "driver", "mode",
//                 "uses": [{"use", "description", "sizes": [{"bytes", "best", "best_us",
//                           "next": string | null, "next_us": number | null}]}],
//                 "inflight": [{"strategy", "bytes", "depth"}],
//                 "refused": [{"strategy", "reason"}]} | null,
//     "link_bandwidth": {"bytes", "repetitions", "h2d_gbps_median", "h2d_gbps_best",
//                        "d2h_gbps_median", "d2h_gbps_best"} | null
//   }],
//   "peer_access": [{"from", "to", "can_access": bool, "enabled": bool, "error": string | null,
//                    "bandwidth": {"bytes", "repetitions", "gbps_median", "gbps_best"} | null}]
// }
// "peer_access" (every ordered pair, from enable_peer_access) is present only with 2+ devices.
[[nodiscard]] nlohmann::json build_info_json(const cuda_versions& versions, const std::vector<device_caps>& devices,
                                             const link_measurements& measured = {},
                                             const std::vector<peer_link>& peers = {},
                                             const profile_lookups& profiles = {});

// Aligned, compact text for a terminal, rendered from build_info_json's record.
[[nodiscard]] std::string render_info_text(const nlohmann::json& info);

}  // namespace ferry
