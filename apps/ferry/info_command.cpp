#include "info_command.hpp"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibrate_command.hpp"
#include "commands.hpp"
#include "ferry/backend.hpp"
#include "ferry/info/info_report.hpp"
#include "ferry/device_caps.hpp"
#include "ferry/device_diagnosis.hpp"
#include "ferry/error.hpp"
#include "ferry/link_bandwidth.hpp"
#include "ferry/peer_access.hpp"
#include "ferry/profile.hpp"

namespace ferry::cli {
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

std::string backends_text(const std::vector<backend_info>& backends,
                          const std::vector<std::filesystem::path>& directories) {
  std::string folders;
  for (const auto& d : directories) folders += (folders.empty() ? "" : ", ") + d.string();
  std::string text = fmt::format("\nBackends (model specs NAME:PATH; searched in {}):\n", folders);
  if (backends.empty()) text += "  none found\n";
  for (const auto& b : backends)
    text += b.problem.empty() ? fmt::format("  {:<8} {} (API {}{}), {}\n", b.name, b.version, b.api_version,
                                            b.computes_on_host ? ", also on the CPU" : "", b.file.string())
                              : fmt::format("  {:<8} unusable: {}\n", b.name, b.problem);
  return text;
}

}  // namespace

void run_info(const info_options& options) {
  const auto directories = backend_directories(options.backend_directory);
  const auto backends = list_backends(directories);
  // Without a GPU, --json still prints a document that says so, for scripts collecting it from a
  // fleet, and the text lists the backends; the exit code stays 3 and stderr carries the usual line.
  if (cuda_device_count() == 0) {
    const std::string reason = no_device_reason();
    if (options.format == info_format::json)
      fmt::print("{}\n", nlohmann::json{{"devices", nlohmann::json::array()},
                                        {"no_device_reason", reason},
                                        {"backends", backends_json(backends)}}
                             .dump(2));
    else
      fmt::print("{}", backends_text(backends, directories));
    std::fflush(stdout);
    throw no_device(reason);
  }
  // Devices first, so a machine without a GPU is reported as no_device (exit code 3) before
  // anything else can fail.
  const std::vector<device_caps> devices = options.device
                                               ? std::vector{query_device(*options.device)}
                                               : query_all_devices();
  const cuda_versions versions = query_cuda_versions();
  if (options.profile && devices.size() > 1)
    throw invalid_argument("--profile names one GPU's file: give --device too on a machine with several GPUs");

  link_measurements measured;
  if (options.link == link_measurement::measure) {
    for (const auto& caps : devices) {
      // The measurements on this machine are the profile's: --measure writes it as calibrate does.
      (void)run_calibrate({.depth = bench::sweep_depth::quick, .device = caps.ordinal, .profile = options.profile,
                           .summary = stderr});
      measured.emplace(caps.ordinal, measure_link_bandwidth_blocking(caps.ordinal));
    }
  }

  profile_lookups profiles;
  for (const auto& caps : devices) {
    std::filesystem::path path;
    try {
      path = options.profile ? *options.profile : default_profile_path(caps);
    } catch (const invalid_argument& e) {  // no cache folder: the same as no profile
      profiles.emplace(caps.ordinal, profile_lookup{.status = profile_status::missing, .path = {}, .profile = {},
                                                    .message = e.what()});
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
  // A GPU this build has no code for is shown, and refused by every command that would run on it.
  std::string missing_code;
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (auto why = missing_code_reason(devices[i], ferry_has_code_for(devices[i].ordinal))) {
      info["devices"][i]["missing_code"] = *why;
      missing_code += fmt::format("\nNo code for this GPU: {}\n", *why);
    }
  if (options.format == info_format::json) {
    info["backends"] = backends_json(backends);
    fmt::print("{}\n", info.dump(2));
  } else {
    fmt::print("{}{}{}", render_info_text(info), missing_code, backends_text(backends, directories));
  }
  std::fflush(stdout);
}

void add_info_command(CLI::App& app) {
  // Shared with the callback, which runs after parsing has filled these in.
  struct parsed {
    bool measure = false;
    bool json = false;
    int device = -1;
    std::string profile;
    std::string backend_directory;
    CLI::Option* device_option = nullptr;
  };
  auto flags = std::make_shared<parsed>();

  CLI::App* info = app.add_subcommand(
      "info", "Show each GPU's capabilities, which strategies work (or why not), what to use");
  info->add_flag("--measure", flags->measure,
                 "Calibrate this machine first (`ferry calibrate --quick`, saving the profile), measure the "
                 "pinned H2D/D2H link peak and, with 2+ GPUs, the peer copy bandwidth of every pair both ways");
  info->add_option("--profile", flags->profile,
                   "Read (and with --measure write) this profile instead of "
                   "$XDG_CACHE_HOME/ferry/profiles/<GPU UUID>.json");
  info->add_flag("--json", flags->json, "Print JSON instead of text");
  info->add_option("--backend-directory", flags->backend_directory,
                   "Folder searched first for backends (before FERRY_BACKEND_PATH and the folder beside ferry)");
  flags->device_option =
      info->add_option("--device", flags->device, "Report only this GPU (ordinal)")
          ->check(CLI::Validator(
              [](const std::string& value) {
                return value.starts_with('-') ? "a GPU ordinal is 0 or more, not " + value
                                              : std::string{};
              },
              "ORDINAL"));

  info->callback([flags] {
    info_options options;
    options.format = flags->json ? info_format::json : info_format::text;
    options.link = flags->measure ? link_measurement::measure : link_measurement::skip;
    if (flags->device_option->count() > 0) options.device = flags->device;
    if (!flags->profile.empty()) options.profile = flags->profile;
    options.backend_directory = flags->backend_directory;
    run_info(options);
  });
}

}  // namespace ferry::cli
