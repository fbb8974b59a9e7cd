// `ferry info`'s record, apart from its printing and flags: the CLI prints it (as text or JSON),
// the Python package returns it (ferry.info).
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferry/device/device_caps.hpp"

namespace ferry::frontend {

enum class link_measurement { skip, measure };

struct info_options {
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

// Adds "missing_code" to record["devices"][i] for each of `devices` this build has no code for,
// so a GPU the build lacks is shown (and refused by every command that would run on it).
void mark_missing_code(nlohmann::json& record, const std::vector<device_caps>& devices);

}  // namespace ferry::frontend
