// `ferry info`: what each GPU can do, which strategies work on it (and why not), what was
// measured on this machine (its profile) or else the platform rules, and optionally the measured
// pinned link peak, and the engine backends found (also without a GPU).
#pragma once

#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

namespace ferry::cli {

enum class info_format { text, json };
enum class link_measurement { skip, measure };

struct info_options {
  info_format format = info_format::text;
  link_measurement link = link_measurement::skip;
  std::optional<int> device;  // every device when absent
  // The profile to read (one device only); each device's default cache file when absent.
  std::optional<std::filesystem::path> profile;
  // Searched first for backends, which are listed (empty: FERRY_BACKEND_PATH and beside ferry).
  std::filesystem::path backend_directory;
};

// What `ferry info --json` prints: the record of ferry/info/info_report.hpp for the chosen
// devices (each with "missing_code" where this build has no code for it), plus "backends". Without
// a GPU: {"devices": [], "no_device_reason": "no CUDA device: ...", "backends": [...]}; never throws
// for that. With link_measurement::measure it calibrates each GPU first (saving its profile).
// Throws ferry::invalid_argument for a bad ordinal or --profile with several GPUs.
[[nodiscard]] nlohmann::json info_record(const info_options& options);

// Queries the devices, reads their profiles, optionally calibrates them (`--measure`: a quick
// `ferry calibrate`, saved as usual) and measures their links, and prints the report to stdout.
// Throws ferry::no_device when there is no GPU and ferry::invalid_argument for a bad ordinal.
void run_info(const info_options& options);

}  // namespace ferry::cli
