// The sentences a pick is shown as: choose()'s and choose_per_tensor()'s facts in words. The
// wording is what reports, logs and `ferry info` have always shown; the figures are the pick's own.
#include <string>

#include <fmt/format.h>

#include "ferry/core/byte_size.hpp"
#include "ferry/session/choose.hpp"

namespace ferry {
namespace {

// "16 MB re-read in (671 KB of it read), 4 KB out"
std::string describe_traffic(const io_traffic& io) {
  std::string text = format_byte_size(io.input_bytes) + (io.input_reread ? " re-read" : "") + " in";
  if (io.input_bytes_read > 0 && io.input_bytes_read < io.input_bytes)
    text += " (" + format_byte_size(io.input_bytes_read) + " of it read)";
  return text + ", " + format_byte_size(io.output_bytes) + " out";
}

std::string describe_depth(const choice& pick) {
  if (!pick.depth_finding)
    return fmt::format("{} in-flight slots (platform rules: no depth was measured)", pick.inflight);
  const inflight_finding& f = *pick.depth_finding;
  return fmt::format("{} in-flight slots (throughput stopped rising beyond {} for {} at {})", pick.inflight, f.depth,
                     to_string(f.strategy), format_byte_size(f.bytes));
}

std::string describe_measured(const choice& pick) {
  std::string text =
      fmt::format("measured on this machine ({}, {}): for {} {} costs {:.0f} us per request", pick.profile_date,
                  pick.profile_link, describe_traffic(pick.traffic), to_string(pick.strategy), pick.estimated_us);
  if (pick.runner_up)
    text += fmt::format(", next {} {:.0f} us", to_string(pick.runner_up->strategy), pick.runner_up->us);
  if (pick.reread_costed_as_read_once) text += " (re-read inputs were not measured; read-once figures stand in)";
  return text + fmt::format("; {}; for {}", describe_depth(pick), to_string(pick.goal));
}

std::string describe_rules(const choice& pick) {
  const char* why_not_measured = pick.basis == choice_basis::rules_without_profile
                                     ? "no profile; `ferry calibrate` measures one"
                                     : "the profile holds no measured strategy for these uses";
  std::string text = fmt::format("platform rules for {}, not measured on this machine ({}): {} with {} in-flight slots",
                                 to_string(pick.platform), why_not_measured, to_string(pick.strategy), pick.inflight);
  if (const auto& lacking = pick.rules_pick_unavailable)
    text += fmt::format(" ('{}' is unavailable on this device: {})", to_string(lacking->strategy), lacking->reason);
  return text;
}

// "'indices' (input, 164 B)", "'x' (input, dynamic shape)"
std::string describe_tensor(const tensor_pick& pick) {
  const char* role = pick.role == tensor_role::input ? "input" : "output";
  if (pick.bytes == 0) return fmt::format("'{}' ({}, dynamic shape)", pick.tensor, role);
  return fmt::format("'{}' ({}, {})", pick.tensor, role, format_byte_size(pick.bytes));
}

}  // namespace

std::string describe(const choice& pick) {
  return pick.basis == choice_basis::profile ? describe_measured(pick) : describe_rules(pick);
}

std::string describe(const tensor_pick& pick) {
  const std::string what = describe_tensor(pick);
  const std::string_view request = to_string(pick.request_strategy);
  switch (pick.basis) {
    case tensor_basis::request_not_measured:
      return fmt::format("{}: {}, the request's pick (not measured on this machine, so no tensor is costed on its own)",
                         what, request);
    case tensor_basis::dynamic_shape:
      return fmt::format("{}: {}, the request's pick (its size is not known while a dimension is dynamic)", what,
                         request);
    case tensor_basis::no_curve:
      return fmt::format("{}: {}, the request's pick (the profile has no curve to cost this tensor by)", what, request);
    case tensor_basis::request_pick_cheapest: {
      std::string text = fmt::format("{}: {}, the request's pick, costs as little as any: {:.1f} us", what, request,
                                     pick.request_strategy_us);
      if (pick.next_costlier)
        text += fmt::format(", next {} {:.1f} us", to_string(pick.next_costlier->strategy), pick.next_costlier->us);
      return text;
    }
    case tensor_basis::saving_under_margins:
      return fmt::format(
          "{}: {}, the request's pick, {:.1f} us; {} would save {:.1f} us ({:.1f}%), under the {:.0f} us and {:.0f}% "
          "a second strategy must save",
          what, request, pick.request_strategy_us, pick.cheaper ? to_string(pick.cheaper->strategy) : "another",
          pick.saving_us, 100 * pick.saving_fraction, tensor_override_min_us, 100 * tensor_override_min_fraction);
    case tensor_basis::override_saves_enough:
      return fmt::format("{}: {}, {:.1f} us against {:.1f} us by the request's pick {} (saves {:.1f} us, {:.0f}%)",
                         what, to_string(pick.strategy), pick.estimated_us, pick.request_strategy_us, request,
                         pick.saving_us, 100 * pick.saving_fraction);
  }
  return what;  // unreachable: every basis is rendered above
}

}  // namespace ferry
