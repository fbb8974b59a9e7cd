// What `ferry calibrate` measured on one GPU of this machine, kept as plain data and saved as
// JSON, so advice (`ferry info`, ferry::choose, `--strategy auto`, serve's "auto") quotes this
// machine's figures instead of another machine's.
//
// A profile belongs to one card (its UUID), one driver and one link: a measurement taken under
// another driver, or on another card, is refused rather than applied. Loading never throws for
// a missing, stale or corrupt file: each is its own status with its own one-line message, so a
// caller can fall back to the platform rules and say why.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ferry/device/device_caps.hpp"
#include "ferry/memory/strategy.hpp"

namespace ferry {

// How a request uses a tensor; each costs a strategy differently (zero-copy pays the link on
// every read, a copy pays it once).
enum class transfer_use {
  input_once,    // the kernel reads its input once (a reduction, a first layer)
  input_reread,  // the kernel reads its input several times
  output,        // the CPU reads what the kernel wrote
};

inline constexpr transfer_use all_transfer_uses[] = {transfer_use::input_once, transfer_use::input_reread,
                                                     transfer_use::output};

[[nodiscard]] std::string_view to_string(transfer_use use) noexcept;   // "input-once", ...
[[nodiscard]] std::string_view describe(transfer_use use) noexcept;    // "input read once", ...
[[nodiscard]] transfer_use parse_transfer_use(std::string_view name);  // throws invalid_argument

// One measured size: the median time of a whole request (write, transfer, kernel, read back).
struct profile_point {
  std::size_t bytes = 0;
  double median_us = 0;
  double noise = 0;  // relative uncertainty of the median (0.01 = 1%)
};

// One strategy under one use, over sizes (ascending), or the reason the platform refused it.
struct strategy_curve {
  strategy_kind strategy = strategy_kind::pinned;
  transfer_use use = transfer_use::input_once;
  std::string refused;  // empty: measured
  std::vector<profile_point> points;
};

// The in-flight depth found for one strategy at one size (throughput stops rising beyond it).
struct inflight_finding {
  strategy_kind strategy = strategy_kind::pinned;
  std::size_t bytes = 0;
  int depth = 1;
  std::string explanation;
};

struct device_profile {
  static constexpr int current_format = 1;
  int format = current_format;
  // What the measurements depend on; a profile is used only where all three still hold.
  std::string gpu_uuid;
  std::string gpu_name;
  int driver_version = 0;  // CUDA's encoding (13000 = 13.0)
  std::string link;        // describe_link
  platform_class platform = platform_class::discrete_pcie;
  std::string date;  // ISO 8601, UTC
  std::string host;  // the machine's host name
  std::string mode;  // "quick", "default" or "thorough"
  std::vector<strategy_curve> curves;
  std::vector<inflight_finding> inflight;

  // The curve of a strategy under a use; nullptr when it was not part of the sweep.
  [[nodiscard]] const strategy_curve* find(strategy_kind strategy, transfer_use use) const noexcept;
};

[[nodiscard]] nlohmann::json to_json(const device_profile& profile);
// Throws invalid_argument naming the first missing or malformed field.
[[nodiscard]] device_profile profile_from_json(const nlohmann::json& doc);

// The median time at `bytes`, interpolated linearly between the measured sizes and extrapolated
// from the nearest two beyond them (at least the smallest size's time); nullopt when refused or
// empty.
[[nodiscard]] std::optional<double> estimate_us(const strategy_curve& curve, std::size_t bytes);

// $XDG_CACHE_HOME/ferry/profiles, else ~/.cache/ferry/profiles. Throws invalid_argument when
// neither XDG_CACHE_HOME nor HOME is set.
[[nodiscard]] std::filesystem::path profile_directory();
// profile_directory() / "<uuid>.json".
[[nodiscard]] std::filesystem::path default_profile_path(const device_caps& caps);

enum class profile_status { loaded, missing, stale, corrupt };
[[nodiscard]] std::string_view to_string(profile_status status) noexcept;

struct profile_lookup {
  profile_status status = profile_status::missing;
  std::filesystem::path path;
  std::optional<device_profile> profile;  // set when loaded
  std::string message;                    // one line: what was found, or why it is not used
};

// Reads the profile at `path` and checks it belongs to `caps` (same UUID, driver and link).
// Never throws: missing, stale and corrupt files come back as such, each with its own message.
[[nodiscard]] profile_lookup load_profile(const std::filesystem::path& path, const device_caps& caps);

// Writes the profile (creating its folder); throws invalid_argument when it cannot.
void save_profile(const device_profile& profile, const std::filesystem::path& path);

}  // namespace ferry
