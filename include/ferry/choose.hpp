// ferry::choose: the strategy and in-flight depth for a model's I/O on one GPU, with the reason.
//
// With a profile of this GPU (ferry/profile.hpp) the pick is the available strategy whose
// measured curves cost least for these sizes and uses; without one it is the platform rules
// (ferry/recommendation.hpp), and the reason says they were not measured on this machine.
//
// choose_per_tensor goes one step further for a model whose tensors differ in size: the request's
// pick for most tensors, and another strategy for a tensor whose own curve says it is clearly
// cheaper another way (a small index input read in place beside a large table copied).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/device_caps.hpp"
#include "ferry/engine.hpp"
#include "ferry/profile.hpp"
#include "ferry/strategy.hpp"

namespace ferry {

// What one request moves: all inputs together, all outputs together, and whether the kernel
// reads its input more than once (zero-copy then pays the link on every read).
struct io_traffic {
  std::size_t input_bytes = 0;
  std::size_t output_bytes = 0;
  bool input_reread = false;
  // The input bytes the kernels read (engine::input_bytes_read), when fewer than input_bytes: a
  // lookup that reads a few rows of a table. Strategies whose engine reads host memory in place
  // (zero-copy, managed-advise) pay the link for these only; the others move every input byte.
  // 0: all of them.
  std::size_t input_bytes_read = 0;
};

// What one request of `eng` moves at its concrete I/O (from resolve()), the bytes its kernels
// read included. The kernel's re-reading of an input is not known here: it counts as once.
[[nodiscard]] io_traffic io_traffic_of(const engine& eng, std::span<const tensor_spec> concrete_io);

// What a pick optimises: one request's time, or requests per second. ferry bench's winner and
// its profile checks use the same.
enum class objective { latency, throughput };

// The name reports and --objective use.
[[nodiscard]] constexpr std::string_view to_string(objective goal) noexcept {
  return goal == objective::latency ? "latency" : "throughput";
}

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

// One tensor's strategy in a per-tensor choice, and why.
struct tensor_pick {
  std::string tensor;
  tensor_role role = tensor_role::input;
  std::size_t bytes = 0;                           // 0 for a tensor whose shape is still dynamic
  strategy_kind strategy = strategy_kind::pinned;  // the default or its override
  // Its share of a request's transfer time under that strategy, from the profile (0 without one).
  double estimated_us = 0;
  std::string reason;  // one sentence, naming the tensor
};

struct tensor_choice {
  strategy_kind strategy = strategy_kind::pinned;  // every tensor not in overrides: the request's pick
  std::vector<tensor_strategy> overrides;          // session_options::tensor_strategies
  int inflight = 2;
  bool measured = false;
  std::string reason;                // the request's pick (choose's reason)
  std::vector<tensor_pick> tensors;  // every tensor of io, in its order
};

// The least a tensor's own pick must save, against the request's pick for it, to be taken: both
// 2 us and 3% of the tensor's estimate under the request's pick. Below that the figures cannot
// tell the two apart (interpolated medians, each with its noise), and a second strategy has costs
// the curves do not hold: each curve is a request of one strategy alone, so a mixed request pays
// part of each one's fixed costs (a copy's launch and its stage events beside a zero-copy read).
inline constexpr double tensor_override_min_us = 2.0;
inline constexpr double tensor_override_min_fraction = 0.03;

// The strategy of each tensor of `io` (concrete specs; a dynamic one goes by the default). The
// default is choose()'s pick for the whole request (inputs read once); with a profile each
// tensor is then costed on its own: an input of B bytes at its input-once curve's B, an output
// at output(B) - input_once(B) (as choose combines them), and a tensor whose cheapest available
// strategy beats the default by the margins above gets it as an override. Without a profile (or
// without measured curves for these uses) every tensor goes by the platform rules' strategy,
// with no overrides, and each reason says it was not measured. Never throws; like choose(), never
// picks a refused or unavailable strategy, nor `device`.
[[nodiscard]] tensor_choice choose_per_tensor(const std::vector<tensor_spec>& io, const device_caps& caps,
                                              const device_profile* profile, objective goal);

[[nodiscard]] inline tensor_choice choose_per_tensor(const std::vector<tensor_spec>& io, const device_caps& caps,
                                                     const std::optional<device_profile>& profile, objective goal) {
  return choose_per_tensor(io, caps, profile ? &*profile : nullptr, goal);
}

// The same for `eng`'s concrete I/O, with the bytes its kernels read of each input
// (engine::input_bytes_read): a table read a few rows at a time is cheaper read in place.
[[nodiscard]] tensor_choice choose_per_tensor(const engine& eng, const std::vector<tensor_spec>& io,
                                              const device_caps& caps, const device_profile* profile, objective goal);

}  // namespace ferry
