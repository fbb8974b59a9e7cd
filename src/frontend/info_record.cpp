#include "ferry/frontend/info_record.hpp"

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/device/device_diagnosis.hpp"
#include "ferry/device/link_bandwidth.hpp"
#include "ferry/device/peer_access.hpp"
#include "ferry/engines/backend.hpp"
#include "ferry/frontend/calibrate_run.hpp"
#include "ferry/info/info_report.hpp"
#include "ferry/memory/profile.hpp"

namespace ferry::frontend {
namespace {

nlohmann::json backends_json(const std::vector<backend_info>& backends) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& b : backends) {
    nlohmann::json entry{{"name", b.name}, {"file", b.file.string()}};
    if (b.problem.empty()) {
      entry["version"] = b.version;
      entry["api_version"] = b.api_version;
      entry["computes_on_host"] = b.computes_on_host;
    } else {
      entry["problem"] = b.problem;
    }
    list.push_back(std::move(entry));
  }
  return list;
}

}  // namespace

nlohmann::json info_record(const info_options& options) {
  const auto directories = backend_directories(options.backend_directory);
  const auto backends = list_backends(directories);
  // Without a GPU the record still says so, and lists the backends, for scripts collecting it
  // from a fleet.
  if (cuda_device_count() == 0)
    return {{"devices", nlohmann::json::array()},
            {"no_device_reason", no_device_reason()},
            {"backends", backends_json(backends)}};
  // Devices first, so a machine without a GPU is reported as no_device (exit code 3) before
  // anything else can fail.
  const std::vector<device_caps> devices =
      options.device ? std::vector{query_device(*options.device)} : query_all_devices();
  const cuda_versions versions = query_cuda_versions();
  if (options.profile && devices.size() > 1)
    throw invalid_argument("--profile names one GPU's file: give --device too on a machine with several GPUs");

  link_measurements measured;
  if (options.link == link_measurement::measure) {
    for (const auto& caps : devices) {
      // The measurements on this machine are the profile's: --measure writes it as calibrate does.
      (void)run_calibrate(
          {.depth = bench::sweep_depth::quick, .device = caps.ordinal, .profile = options.profile, .summary = stderr});
      measured.emplace(caps.ordinal, measure_link_bandwidth_blocking(caps.ordinal));
    }
  }

  profile_lookups profiles;
  for (const auto& caps : devices) {
    std::filesystem::path path;
    try {
      path = options.profile ? *options.profile : default_profile_path(caps);
    } catch (const invalid_argument& e) {  // no cache folder: the same as no profile
      profiles.emplace(
          caps.ordinal,
          profile_lookup{.status = profile_status::missing, .path = {}, .profile = {}, .message = e.what()});
      continue;
    }
    profiles.emplace(caps.ordinal, load_profile(path, caps));
  }

  // With two GPUs or more: which pairs reach each other directly, peer access switched on where
  // allowed (as a replica set does, so the measured rate is the direct one, not one staged through
  // the host), and with --measure the copy rate each way.
  std::vector<peer_link> peers;
  if (devices.size() >= 2) {
    std::vector<int> ordinals;
    for (const auto& caps : devices) ordinals.push_back(caps.ordinal);
    peers = enable_peer_access(ordinals);
    if (options.link == link_measurement::measure)
      for (auto& link : peers) link.bandwidth = measure_peer_bandwidth_blocking(link.from, link.to);
  }

  nlohmann::json info = build_info_json(versions, devices, measured, peers, profiles);
  mark_missing_code(info, devices);
  info["backends"] = backends_json(backends);
  return info;
}

void mark_missing_code(nlohmann::json& record, const std::vector<device_caps>& devices) {
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (auto why = missing_code_reason(devices[i], ferry_has_code_for(devices[i].ordinal)))
      record["devices"][i]["missing_code"] = *why;
}

}  // namespace ferry::frontend
