// ferry::choose: the strategy and in-flight depth for a model's I/O on one GPU, with the facts
// the pick rests on.
//
// With a profile of this GPU (ferry/memory/profile.hpp) the pick is the available strategy whose
// measured curves cost least for these sizes and uses; without one it is the platform rules
// (ferry/memory/recommendation.hpp), and the pick says they were not measured on this machine.
//
// choose_per_tensor goes one step further for a model whose tensors differ in size: the request's
// pick for most tensors, and another strategy for a tensor whose own curve says it is clearly
// cheaper another way (a small index input read in place beside a large table copied).
//
// The picks are plain data: the basis they were made on and the figures that decided them.
// describe() renders them as the one sentence reports, logs and `ferry info` show.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/device/device_caps.hpp"
#include "ferry/engines/engine.hpp"
#include "ferry/memory/profile.hpp"
#include "ferry/memory/strategy.hpp"

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

// On what basis choose() made its pick: one per way it decides.
enum class choice_basis {
  profile,                // the cheapest available strategy by this GPU's measured curves
  rules_without_profile,  // the platform rules: no profile of this GPU was given
  rules_without_curves,   // the platform rules: the profile holds no measured strategy for these uses
};

// A strategy and what a profile's curves estimate it costs (one request, or one tensor's share).
struct strategy_estimate {
  strategy_kind strategy = strategy_kind::pinned;
  double us = 0;
};

// A strategy the platform rules recommend that this device cannot run, and the device's reason.
struct unavailable_strategy {
  strategy_kind strategy = strategy_kind::pinned;
  std::string reason;  // unavailable_reason(strategy, caps)
};

struct choice {
  strategy_kind strategy = strategy_kind::pinned;
  int inflight = 2;
  choice_basis basis = choice_basis::rules_without_profile;
  // Estimated time of one request's transfers, from the profile (0 under the platform rules).
  double estimated_us = 0;

  // What the pick is for, as choose() was asked.
  io_traffic traffic;
  objective goal = objective::latency;
  platform_class platform = platform_class::discrete_pcie;  // the device's class (whose rules apply)

  // basis == profile: the profile's identity, and the figures beside the pick.
  std::string profile_date;  // device_profile::date
  std::string profile_link;  // device_profile::link
  // The next cheapest available strategy for this request; nullopt when only one was costed.
  std::optional<strategy_estimate> runner_up;
  // The inputs are re-read, the profile holds no re-read curves: the read-once curves stood in.
  bool reread_costed_as_read_once = false;
  // The depth search `inflight` comes from (the chosen strategy's nearest in size, else any
  // strategy's); nullopt: the profile holds none, and the platform rules' depth stands.
  std::optional<inflight_finding> depth_finding;

  // basis == rules_*: the rules' own strategy when this device cannot run it; `strategy` is then
  // the first of the rules' alternatives it can run, else pinned. nullopt: the rules' pick stands.
  std::optional<unavailable_strategy> rules_pick_unavailable;
};

// Never throws. A strategy the device refuses (unavailable_reason) or the profile recorded as
// refused is never picked; `device` (device-resident data) is not a way to feed host inputs.
[[nodiscard]] choice choose(const io_traffic& io, const device_caps& caps, const device_profile* profile,
                            objective goal);

[[nodiscard]] inline choice choose(const io_traffic& io, const device_caps& caps,
                                   const std::optional<device_profile>& profile, objective goal) {
  return choose(io, caps, profile ? &*profile : nullptr, goal);
}

// On what basis choose_per_tensor picked one tensor's strategy: one per way it decides. All but
// the last keep the request's pick.
enum class tensor_basis {
  request_not_measured,   // the request's pick came from the platform rules: no tensor is costed alone
  dynamic_shape,          // the tensor's size is not known while a dimension is dynamic
  no_curve,               // the profile has no curve to cost this tensor by (a guard: the request's curves do)
  request_pick_cheapest,  // the request's pick costs as little as any available strategy
  saving_under_margins,   // another strategy is cheaper, by less than the override margins
  override_saves_enough,  // another strategy saves at least both margins: it overrides the request's pick
};

// One tensor's strategy in a per-tensor choice, and the figures it was decided by.
struct tensor_pick {
  std::string tensor;
  tensor_role role = tensor_role::input;
  std::size_t bytes = 0;                           // 0 for a tensor whose shape is still dynamic
  strategy_kind strategy = strategy_kind::pinned;  // the request's pick or its override
  // Its share of a request's transfer time under that strategy, from the profile (0 when not costed).
  double estimated_us = 0;
  tensor_basis basis = tensor_basis::request_not_measured;

  strategy_kind request_strategy = strategy_kind::pinned;  // the request's pick (choose's)
  // This tensor's share under the request's pick (0 when not costed: the first three bases).
  double request_strategy_us = 0;
  // request_pick_cheapest: the cheapest strategy that costs more than the request's pick; nullopt
  // when none does.
  std::optional<strategy_estimate> next_costlier;
  // saving_under_margins, override_saves_enough: the cheapest strategy, which costs less than the
  // request's pick (for an override, the one taken), what it saves against request_strategy_us,
  // and that saving as a fraction of request_strategy_us.
  std::optional<strategy_estimate> cheaper;
  double saving_us = 0;
  double saving_fraction = 0;
};

struct tensor_choice {
  // choose()'s pick for the whole request: the strategy of every tensor not in overrides, and the
  // in-flight depth.
  choice request;
  std::vector<tensor_strategy> overrides;  // session_options::tensor_strategies
  std::vector<tensor_pick> tensors;        // every tensor of io, in its order
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
// with no overrides (tensor_basis::request_not_measured). Never throws; like choose(), never
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

// The one sentence a pick is shown as (reports, logs, `ferry info`), figures included where
// measured; a tensor's names the tensor.
[[nodiscard]] std::string describe(const choice& pick);
[[nodiscard]] std::string describe(const tensor_pick& pick);

}  // namespace ferry
