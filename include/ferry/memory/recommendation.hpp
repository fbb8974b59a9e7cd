// Which strategy to start from on each kind of platform, before anything has been measured.
//
// The advice is static and per platform_class: what the way each platform moves bytes implies,
// without figures, because it was not measured on the machine it is shown on. Advice measured on
// this machine comes from a profile (ferry/memory/profile.hpp, `ferry calibrate`) through ferry::choose.
#pragma once

#include <span>
#include <string_view>

#include "ferry/device/device_caps.hpp"
#include "ferry/memory/strategy.hpp"

namespace ferry {

struct recommendation {
  platform_class platform;
  strategy_kind recommended;
  // Measured (or expected) to be as good as `recommended` in the situation the reasoning names.
  std::span<const strategy_kind> alternatives;
  // Available on this kind of platform but measurably slower; never the default choice.
  std::span<const strategy_kind> avoid;
  // In-flight slots (docs/ARCHITECTURE.md §4) needed so the CPU fills request k+1 while request k runs.
  int in_flight_slots;
  std::string_view reasoning;
};

// The static advice for a platform class; the spans point at static storage.
[[nodiscard]] recommendation recommendation_for(platform_class platform) noexcept;

}  // namespace ferry
