// The pick behind `auto`: measured curves when this GPU has a profile, the platform rules when not.
//
// How the curves combine. A profile's curves are whole requests of built-in workloads (see
// `ferry calibrate`): input-once and input-reread requests move an input and return a few bytes;
// an output request moves an input and returns an output of the same size. So one request with
// I bytes in and O bytes out costs about
//   input(I) + (output(O) - input_once(O))
// for each strategy: the output request less the input it also carried. The subtraction cancels
// the fixed costs the two requests share (launch, synchronisation), which is what is wanted:
// they are counted once, in input(I).
//
// Per tensor (choose_per_tensor) the same costs are taken one tensor at a time: an input alone is
// input(B), an output alone output(B) - input_once(B). An input's figure so still holds the fixed
// costs of a whole request, which is why a tensor leaves the request's pick only for a clear gain
// (tensor_override_min_us, tensor_override_min_fraction): a difference in fixed costs is real for
// a tensor only in part.
#include "ferry/byte_size.hpp"
#include "ferry/choose.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "ferry/recommendation.hpp"

namespace ferry {
namespace {

std::string format_bytes(std::size_t bytes) { return format_byte_size(bytes); }

bool offered(strategy_kind k, const device_caps& caps) {
  return k != strategy_kind::device && !unavailable_reason(k, caps).has_value();
}

struct estimate {
  strategy_kind strategy;
  double us;
};

// Whether the engine reads the input where the strategy left it in host memory, over the link:
// then only the bytes it reads cross. managed-advise keeps its pages on the host and the GPU reads
// them remotely, as mapped memory; fault-driven managed migrates whole blocks around each touched
// page, and the copy strategies and managed-prefetch move the whole tensor first.
bool reads_in_place(strategy_kind k) {
  return properties(k).path == data_path::zero_copy || k == strategy_kind::managed_advise;
}

// The input bytes that cross the link under `k`.
std::size_t input_bytes_moved(const io_traffic& io, strategy_kind k) {
  const bool fewer = io.input_bytes_read > 0 && io.input_bytes_read < io.input_bytes;
  return fewer && reads_in_place(k) ? io.input_bytes_read : io.input_bytes;
}

// The request's cost under one strategy, or nullopt when a curve it needs is missing or refused.
std::optional<double> request_us(const device_profile& p, strategy_kind k, const io_traffic& io, transfer_use input_use) {
  double total = 0;
  // A request that moves nothing still pays each strategy's fixed costs: the smallest size's time.
  if (io.input_bytes > 0 || io.output_bytes == 0) {
    const strategy_curve* in = p.find(k, input_use);
    if (in == nullptr) return std::nullopt;
    const auto us = estimate_us(*in, input_bytes_moved(io, k));
    if (!us) return std::nullopt;
    total += *us;
  }
  if (io.output_bytes > 0) {
    const strategy_curve* out = p.find(k, transfer_use::output);
    const strategy_curve* carried = p.find(k, transfer_use::input_once);
    if (out == nullptr || carried == nullptr) return std::nullopt;
    const auto with_output = estimate_us(*out, io.output_bytes);
    const auto without = estimate_us(*carried, io.output_bytes);
    if (!with_output || !without) return std::nullopt;
    total += std::max(0.0, *with_output - *without);
  }
  return total;
}

// The depth found nearest this size (in ratio), preferring findings of the chosen strategy.
const inflight_finding* nearest_finding(const device_profile& p, strategy_kind k, std::size_t bytes) {
  const inflight_finding* best = nullptr;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const bool same_strategy : {true, false}) {
    for (const auto& f : p.inflight) {
      if (same_strategy && f.strategy != k) continue;
      const double d = std::abs(std::log(static_cast<double>(std::max<std::size_t>(f.bytes, 1))) -
                                std::log(static_cast<double>(std::max<std::size_t>(bytes, 1))));
      if (d < best_distance) {
        best = &f;
        best_distance = d;
      }
    }
    if (best != nullptr) return best;
  }
  return nullptr;
}

choice from_rules(const device_caps& caps, std::string_view why_not_measured) {
  const platform_class platform = classify(caps);
  const recommendation r = recommendation_for(platform);
  choice c;
  c.inflight = r.in_flight_slots;
  c.strategy = r.recommended;
  std::string substitute;
  if (!offered(r.recommended, caps)) {
    // The rules speak for the class; this device may lack the capability they assume.
    auto it = std::find_if(r.alternatives.begin(), r.alternatives.end(),
                           [&](strategy_kind k) { return offered(k, caps); });
    c.strategy = it != r.alternatives.end() ? *it : strategy_kind::pinned;
    substitute = fmt::format(" ('{}' is unavailable on this device: {})", to_string(r.recommended),
                             unavailable_reason(r.recommended, caps).value_or(""));
  }
  c.reason = fmt::format("platform rules for {}, not measured on this machine ({}): {} with {} in-flight slots{}",
                         to_string(platform), why_not_measured, to_string(c.strategy), c.inflight, substitute);
  return c;
}

// A tensor's share of a request under one strategy: a request moving only this tensor, less what
// the output curve's carried input costs (see request_us); nullopt without the curves.
// `read`: the bytes of an input the kernels read (see io_traffic::input_bytes_read).
std::optional<double> tensor_us(const device_profile& p, strategy_kind k, const tensor_spec& t, std::size_t bytes,
                                std::size_t read) {
  const io_traffic alone = t.role == tensor_role::input
                               ? io_traffic{.input_bytes = bytes, .output_bytes = 0, .input_bytes_read = read}
                               : io_traffic{.input_bytes = 0, .output_bytes = bytes};
  return request_us(p, k, alone, transfer_use::input_once);
}

std::string describe_tensor(const tensor_spec& t, std::size_t bytes) {
  const char* role = t.role == tensor_role::input ? "input" : "output";
  if (bytes == 0) return fmt::format("'{}' ({}, dynamic shape)", t.name, role);
  return fmt::format("'{}' ({}, {})", t.name, role, format_bytes(bytes));
}

// The concrete size of a tensor, 0 while a dim is still dynamic (choose_per_tensor never throws).
std::size_t concrete_bytes(const tensor_spec& t) noexcept {
  if (t.is_dynamic()) return 0;
  try {
    return t.bytes();
  } catch (...) {
    return 0;
  }
}

// One measured tensor: its cheapest available strategy against the request's pick `fallback`.
tensor_pick pick_tensor(const device_profile& p, const device_caps& caps, const tensor_spec& t, std::size_t bytes,
                        std::size_t read, strategy_kind fallback) {
  tensor_pick pick{
      .tensor = t.name, .role = t.role, .bytes = bytes, .strategy = fallback, .estimated_us = 0, .reason = {}};
  const std::string what = describe_tensor(t, bytes);
  const auto kept = tensor_us(p, fallback, t, bytes, read);
  std::vector<estimate> ranked;
  for (const strategy_kind k : all_strategies) {
    if (!offered(k, caps)) continue;
    if (const auto us = tensor_us(p, k, t, bytes, read)) ranked.push_back({k, *us});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const estimate& a, const estimate& b) { return a.us < b.us; });
  if (!kept || ranked.empty()) {
    pick.reason = fmt::format("{}: {}, the request's pick (the profile has no curve to cost this tensor by)", what,
                              to_string(fallback));
    return pick;
  }
  pick.estimated_us = *kept;
  const estimate& best = ranked.front();
  if (best.strategy == fallback || best.us >= *kept) {  // a tie keeps the request's pick
    pick.reason = fmt::format("{}: {}, the request's pick, costs as little as any: {:.1f} us", what,
                              to_string(fallback), *kept);
    const auto next = std::find_if(ranked.begin(), ranked.end(),
                                   [&](const estimate& e) { return e.strategy != fallback && e.us > *kept; });
    if (next != ranked.end()) pick.reason += fmt::format(", next {} {:.1f} us", to_string(next->strategy), next->us);
    return pick;
  }
  const double saving = *kept - best.us;
  const double fraction = *kept > 0 ? saving / *kept : 0;
  if (saving >= tensor_override_min_us && fraction >= tensor_override_min_fraction) {
    pick.strategy = best.strategy;
    pick.estimated_us = best.us;
    pick.reason = fmt::format("{}: {}, {:.1f} us against {:.1f} us by the request's pick {} (saves {:.1f} us, {:.0f}%)",
                              what, to_string(best.strategy), best.us, *kept, to_string(fallback), saving,
                              100 * fraction);
    return pick;
  }
  pick.reason = fmt::format(
      "{}: {}, the request's pick, {:.1f} us; {} would save {:.1f} us ({:.1f}%), under the {:.0f} us and {:.0f}% a "
      "second strategy must save",
      what, to_string(fallback), *kept, to_string(best.strategy), saving, 100 * fraction, tensor_override_min_us,
      100 * tensor_override_min_fraction);
  return pick;
}

}  // namespace

io_traffic io_traffic_of(const engine& eng, std::span<const tensor_spec> concrete_io) {
  io_traffic io;
  for (const auto& t : concrete_io) {
    if (t.role == tensor_role::input) {
      io.input_bytes += t.bytes();
      io.input_bytes_read += eng.input_bytes_read(t);
    } else {
      io.output_bytes += t.bytes();
    }
  }
  return io;
}

choice choose(const io_traffic& io, const device_caps& caps, const device_profile* profile, objective goal) {
  if (profile == nullptr) return from_rules(caps, "no profile; `ferry calibrate` measures one");

  transfer_use input_use = io.input_reread ? transfer_use::input_reread : transfer_use::input_once;
  std::vector<estimate> ranked;
  auto rank = [&] {
    ranked.clear();
    for (const strategy_kind k : all_strategies) {
      if (!offered(k, caps)) continue;
      if (const auto us = request_us(*profile, k, io, input_use)) ranked.push_back({k, *us});
    }
  };
  rank();
  std::string use_note;
  if (ranked.empty() && input_use == transfer_use::input_reread) {
    input_use = transfer_use::input_once;
    use_note = " (re-read inputs were not measured; read-once figures stand in)";
    rank();
  }
  if (ranked.empty()) return from_rules(caps, "the profile holds no measured strategy for these uses");

  std::stable_sort(ranked.begin(), ranked.end(), [](const estimate& a, const estimate& b) { return a.us < b.us; });
  choice c;
  c.measured = true;
  c.strategy = ranked.front().strategy;
  c.estimated_us = ranked.front().us;
  std::string depth_note;
  if (const inflight_finding* f = nearest_finding(*profile, c.strategy, io.input_bytes)) {
    // The depth search maximises throughput; for latency, two slots already let the CPU fill the
    // next request while the current one runs, and more only queue requests behind each other.
    c.inflight = goal == objective::throughput ? f->depth : std::min(f->depth, 2);
    depth_note = fmt::format("{} in-flight slots (throughput stopped rising beyond {} for {} at {})", c.inflight,
                             f->depth, to_string(f->strategy), format_bytes(f->bytes));
  } else {
    c.inflight = recommendation_for(classify(caps)).in_flight_slots;
    depth_note = fmt::format("{} in-flight slots (platform rules: no depth was measured)", c.inflight);
  }
  std::string traffic = format_bytes(io.input_bytes) + (io.input_reread ? " re-read" : "") + " in";
  if (io.input_bytes_read > 0 && io.input_bytes_read < io.input_bytes)
    traffic += " (" + format_bytes(io.input_bytes_read) + " of it read)";
  traffic += ", " + format_bytes(io.output_bytes) + " out";
  c.reason = fmt::format("measured on this machine ({}, {}): for {} {} costs {:.0f} us per request", profile->date,
                         profile->link, traffic, to_string(c.strategy), c.estimated_us);
  if (ranked.size() > 1)
    c.reason += fmt::format(", next {} {:.0f} us", to_string(ranked[1].strategy), ranked[1].us);
  c.reason += fmt::format("{}; {}; for {}", use_note, depth_note, goal == objective::latency ? "latency" : "throughput");
  return c;
}

namespace {

// choose_per_tensor with the bytes each input's kernels read (`reads`, one per tensor of `io`).
tensor_choice choose_per_tensor_reading(const std::vector<tensor_spec>& io, const std::vector<std::size_t>& reads,
                                        const device_caps& caps, const device_profile* profile, objective goal) {
  io_traffic traffic;
  std::vector<std::size_t> sizes;
  for (std::size_t i = 0; i < io.size(); ++i) {
    const tensor_spec& t = io[i];
    sizes.push_back(concrete_bytes(t));
    (t.role == tensor_role::input ? traffic.input_bytes : traffic.output_bytes) += sizes.back();
    if (t.role == tensor_role::input) traffic.input_bytes_read += reads[i];
  }
  const choice whole = choose(traffic, caps, profile, goal);
  tensor_choice c{.strategy = whole.strategy,
                  .overrides = {},
                  .inflight = whole.inflight,
                  .measured = whole.measured,
                  .reason = whole.reason,
                  .tensors = {}};
  for (std::size_t i = 0; i < io.size(); ++i) {
    const tensor_spec& t = io[i];
    if (!whole.measured || sizes[i] == 0) {
      const char* why = !whole.measured ? "not measured on this machine, so no tensor is costed on its own"
                                        : "its size is not known while a dimension is dynamic";
      c.tensors.push_back({.tensor = t.name,
                           .role = t.role,
                           .bytes = sizes[i],
                           .strategy = whole.strategy,
                           .estimated_us = 0,
                           .reason = fmt::format("{}: {}, the request's pick ({})", describe_tensor(t, sizes[i]),
                                                 to_string(whole.strategy), why)});
      continue;
    }
    c.tensors.push_back(pick_tensor(*profile, caps, t, sizes[i], reads[i], whole.strategy));
    if (c.tensors.back().strategy != whole.strategy) c.overrides.push_back({t.name, c.tensors.back().strategy});
  }
  return c;
}

}  // namespace

tensor_choice choose_per_tensor(const std::vector<tensor_spec>& io, const device_caps& caps,
                                const device_profile* profile, objective goal) {
  std::vector<std::size_t> reads;
  for (const auto& t : io) reads.push_back(concrete_bytes(t));
  return choose_per_tensor_reading(io, reads, caps, profile, goal);
}

tensor_choice choose_per_tensor(const engine& eng, const std::vector<tensor_spec>& io, const device_caps& caps,
                                const device_profile* profile, objective goal) {
  std::vector<std::size_t> reads;
  for (const auto& t : io) reads.push_back(concrete_bytes(t) > 0 ? eng.input_bytes_read(t) : 0);
  return choose_per_tensor_reading(io, reads, caps, profile, goal);
}

}  // namespace ferry
