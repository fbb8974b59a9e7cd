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
//
// The policy returns facts (a basis and its figures); describe_choice.cpp renders them.
#include "ferry/session/choose.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "ferry/memory/recommendation.hpp"

namespace ferry {
namespace {

// A strategy whose data is kept in GPU memory (data_path::resident: the `device` floor, `peer`) is
// not a way to feed host inputs, so it is never offered; nor is one the device refuses.
bool offered(strategy_kind k, const device_caps& caps) {
  return properties(k).path != data_path::resident && !unavailable_reason(k, caps).has_value();
}

// The input bytes that cross the link under `k`. Where the engine reads the input where the
// strategy left it, over the link (strategy_properties::reads_in_place: zero-copy, and
// managed-advise, whose pages stay on the host), only the bytes it reads cross; fault-driven
// managed migrates whole blocks around each touched page, and the copy strategies and
// managed-prefetch move the whole tensor first.
std::size_t input_bytes_moved(const io_traffic& io, strategy_kind k) {
  const bool fewer = io.input_bytes_read > 0 && io.input_bytes_read < io.input_bytes;
  return fewer && properties(k).reads_in_place ? io.input_bytes_read : io.input_bytes;
}

// The request's cost under one strategy, or nullopt when a curve it needs is missing or refused.
std::optional<double> request_us(const device_profile& p, strategy_kind k, const io_traffic& io,
                                 transfer_use input_use) {
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

// A pick for `io` and `goal` before anything is decided: what every basis records.
choice asked(const io_traffic& io, const device_caps& caps, objective goal) {
  choice c;
  c.traffic = io;
  c.goal = goal;
  c.platform = classify(caps);
  return c;
}

choice from_rules(choice c, const device_caps& caps, choice_basis basis) {
  const recommendation r = recommendation_for(c.platform);
  c.basis = basis;
  c.inflight = r.in_flight_slots;
  c.strategy = r.recommended;
  if (!offered(r.recommended, caps)) {
    // The rules speak for the class; this device may lack the capability they assume.
    auto it =
        std::find_if(r.alternatives.begin(), r.alternatives.end(), [&](strategy_kind k) { return offered(k, caps); });
    c.strategy = it != r.alternatives.end() ? *it : strategy_kind::pinned;
    c.rules_pick_unavailable =
        unavailable_strategy{r.recommended, unavailable_reason(r.recommended, caps).value_or("")};
  }
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

// A tensor kept on the request's pick, before any costing.
tensor_pick on_request_pick(const tensor_spec& t, std::size_t bytes, strategy_kind request, tensor_basis basis) {
  tensor_pick pick;
  pick.tensor = t.name;
  pick.role = t.role;
  pick.bytes = bytes;
  pick.strategy = request;
  pick.basis = basis;
  pick.request_strategy = request;
  return pick;
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
  tensor_pick pick = on_request_pick(t, bytes, fallback, tensor_basis::no_curve);
  const auto kept = tensor_us(p, fallback, t, bytes, read);
  std::vector<strategy_estimate> ranked;
  for (const strategy_kind k : all_strategies) {
    if (!offered(k, caps)) continue;
    if (const auto us = tensor_us(p, k, t, bytes, read)) ranked.push_back({k, *us});
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const strategy_estimate& a, const strategy_estimate& b) { return a.us < b.us; });
  if (!kept || ranked.empty()) return pick;
  pick.estimated_us = *kept;
  pick.request_strategy_us = *kept;
  const strategy_estimate& best = ranked.front();
  if (best.strategy == fallback || best.us >= *kept) {  // a tie keeps the request's pick
    pick.basis = tensor_basis::request_pick_cheapest;
    const auto next = std::find_if(ranked.begin(), ranked.end(),
                                   [&](const strategy_estimate& e) { return e.strategy != fallback && e.us > *kept; });
    if (next != ranked.end()) pick.next_costlier = *next;
    return pick;
  }
  pick.cheaper = best;
  pick.saving_us = *kept - best.us;
  pick.saving_fraction = *kept > 0 ? pick.saving_us / *kept : 0;
  if (pick.saving_us >= tensor_override_min_us && pick.saving_fraction >= tensor_override_min_fraction) {
    pick.basis = tensor_basis::override_saves_enough;
    pick.strategy = best.strategy;
    pick.estimated_us = best.us;
  } else {
    pick.basis = tensor_basis::saving_under_margins;
  }
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
  choice c = asked(io, caps, goal);
  if (profile == nullptr) return from_rules(std::move(c), caps, choice_basis::rules_without_profile);

  transfer_use input_use = io.input_reread ? transfer_use::input_reread : transfer_use::input_once;
  std::vector<strategy_estimate> ranked;
  auto rank = [&] {
    ranked.clear();
    for (const strategy_kind k : all_strategies) {
      if (!offered(k, caps)) continue;
      if (const auto us = request_us(*profile, k, io, input_use)) ranked.push_back({k, *us});
    }
  };
  rank();
  const bool reread_not_measured = ranked.empty() && input_use == transfer_use::input_reread;
  if (reread_not_measured) {
    input_use = transfer_use::input_once;
    rank();
  }
  if (ranked.empty()) return from_rules(std::move(c), caps, choice_basis::rules_without_curves);

  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const strategy_estimate& a, const strategy_estimate& b) { return a.us < b.us; });
  c.basis = choice_basis::profile;
  c.reread_costed_as_read_once = reread_not_measured;
  c.strategy = ranked.front().strategy;
  c.estimated_us = ranked.front().us;
  if (ranked.size() > 1) c.runner_up = ranked[1];
  c.profile_date = profile->date;
  c.profile_link = profile->link;
  if (const inflight_finding* f = nearest_finding(*profile, c.strategy, io.input_bytes)) {
    // The depth search maximises throughput; for latency, two slots already let the CPU fill the
    // next request while the current one runs, and more only queue requests behind each other.
    c.inflight = goal == objective::throughput ? f->depth : std::min(f->depth, 2);
    c.depth_finding = *f;
  } else {
    c.inflight = recommendation_for(c.platform).in_flight_slots;
  }
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
  tensor_choice c{.request = whole, .overrides = {}, .tensors = {}};
  for (std::size_t i = 0; i < io.size(); ++i) {
    const tensor_spec& t = io[i];
    if (whole.basis != choice_basis::profile) {
      c.tensors.push_back(on_request_pick(t, sizes[i], whole.strategy, tensor_basis::request_not_measured));
      continue;
    }
    if (sizes[i] == 0) {
      c.tensors.push_back(on_request_pick(t, sizes[i], whole.strategy, tensor_basis::dynamic_shape));
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
