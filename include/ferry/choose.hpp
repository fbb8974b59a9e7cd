// ferry::choose: the strategy and in-flight depth for a model's I/O on one GPU, with the reason.
//
// With a profile of this GPU (ferry/profile.hpp) the pick is the available strategy whose
// measured curves cost least for these sizes and uses; without one it is the platform rules
// (ferry/recommendation.hpp), and the reason says they were not measured on this machine.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "ferry/device_caps.hpp"
#include "ferry/profile.hpp"
#include "ferry/strategy.hpp"

namespace ferry {

// What one request moves: all inputs together, all outputs together, and whether the kernel
// reads its input more than once (zero-copy then pays the link on every read).
struct io_traffic {
  std::size_t input_bytes = 0;
  std::size_t output_bytes = 0;
  bool input_reread = false;
};

enum class objective { latency, throughput };

struct choice {
  strategy_kind strategy = strategy_kind::pinned;
  int inflight = 2;
  bool measured = false;  // from a profile of this GPU, not the platform rules
  // Estimated time of one request's transfers, from the profile (0 without one).
  double estimated_us = 0;
  std::string reason;     // one sentence, figures included where measured
};

// Never throws. A strategy the device refuses (unavailable_reason) or the profile recorded as
// refused is never picked; `device` (device-resident data) is not a way to feed host inputs.
[[nodiscard]] choice choose(const io_traffic& io, const device_caps& caps, const device_profile* profile,
                            objective goal);

[[nodiscard]] inline choice choose(const io_traffic& io, const device_caps& caps,
                                   const std::optional<device_profile>& profile, objective goal) {
  return choose(io, caps, profile ? &*profile : nullptr, goal);
}

}  // namespace ferry
