#include "ferry/bench/calibrate.hpp"
#include "ferry/core/byte_size.hpp"

#include <unistd.h>

#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "bench/measure/cell_runner.hpp"
#include "bench/measure/inflight_search.hpp"
#include "bench/runs/auto_strategy.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/bench/workload_factory.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/memory/recommendation.hpp"

namespace ferry::bench {
namespace {

// A built-in workload of `bytes` on one GPU, for a calibration cell.
workload_request builtin_request(std::string engine, std::size_t bytes, int device, int max_concurrency) {
  workload_request request;
  request.engine = std::move(engine);
  request.input_bytes = bytes;
  request.devices = {device};
  request.max_concurrency = max_concurrency;
  return request;
}

constexpr std::size_t kib = 1024;
constexpr std::size_t mib = kib * kib;

// The built-in workload that stands for each use.
std::string_view engine_for(transfer_use use) {
  switch (use) {
    case transfer_use::input_once:
      return "reduce";
    case transfer_use::input_reread:
      return "reduce:4";
    case transfer_use::output:
      return "touch";
  }
  return "reduce";
}

// From 16 MiB on, fixed costs are a small share of every strategy's request, and the ratio
// between strategies moves little with size: on the H200 host the largest move from 16 to
// 256 MiB was a factor 1.8 (pageable outputs, from 4.8x to 2.6x the best). A strategy three
// times slower than the best at such a size cannot become the best at the next, so the default
// and quick sweeps leave it there (its slowest, costliest cells); thorough measures every cell.
// Below 16 MiB the ratios move more (managed-prefetch's re-read inputs: 2.8x at 1 MiB, 1.2x at
// 16 MiB), so every strategy is measured.
constexpr double laggard_ratio = 3.0;
constexpr std::size_t laggard_from_bytes = 16 * mib;

// How one cell is measured. What a cell costs beside its timed requests grows with its size:
// every request's input is written fresh by the CPU (about 70 ms at 256 MiB on the H200 host),
// checked requests are copied and run again on the reference, and the buffers are made and
// freed. On the H200 host a 256 MiB cell took 1.7 s (an input) to 4 s (an output) for three timed
// requests, so the default sweep stops at 64 MiB and only --thorough goes to 256 MiB.
//  - Below 16 MiB requests cost microseconds: each cell samples until its median is known within
//    2% (at most 0.15 s); with a fixed 16 requests the medians at 1 MiB were uncertain by 10%,
//    more than the gaps between the strategies that matter there.
//  - From 16 MiB a few requests settle the median (their noise was 0.1-3%), after a short warm-up.
run_options cell_options(int device, sweep_depth depth, std::size_t bytes) {
  run_options o;
  o.devices = {device};
  o.session.inflight = 1;
  o.session.managed_policy = oversubscription::refuse;
  o.recipes = false;  // the profile compares strategies, not strategies with their recipes
  o.um_counters = false;
  // One trial per cell: a sweep is a first picture in seconds, not a figure to compare runs by.
  o.limits.min_trials = o.limits.max_trials = 1;
  if (depth == sweep_depth::thorough) {
    o.check_every = 16;
    o.limits = {.max_noise = 0.02,
                .min_samples = 20,
                .min_seconds = 0.05,
                .max_seconds = 1.0,
                .min_trials = 1,
                .max_trials = 1};
    return o;
  }
  if (bytes < 16 * mib) {
    o.check_every = 16;
    o.limits = {.max_noise = 0.02,
                .min_samples = 16,
                .min_seconds = 0.01,
                .max_seconds = 0.15,
                .min_trials = 1,
                .max_trials = 1};
    o.warmup_rule = {
        .min_iterations = 6, .max_iterations = 64, .min_seconds = 0.01, .max_seconds = 0.1, .tolerance = 0.05};
    return o;
  }
  o.check_every = 64;  // requests 1 and 2 are checked
  o.iterations = bytes >= 64 * mib ? 3 : 6;
  o.warmup_rule = {.min_iterations = 3, .max_iterations = 16, .min_seconds = 0, .max_seconds = 0.15, .tolerance = 0.05};
  return o;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

// What a profile is measured against (the GPU, its driver and link) and when, where and how.
device_profile profile_header(const device_caps& caps, sweep_depth depth) {
  device_profile p;
  p.gpu_uuid = caps.uuid;
  p.gpu_name = caps.name;
  p.driver_version = caps.driver_version;
  p.link = describe_link(caps);
  p.platform = classify(caps);
  p.date = utc_timestamp();
  p.host = host_name();
  p.mode = std::string(to_string(depth));
  return p;
}

// A cell holds the measured request's input and output once and the reference session's copy
// on the device: a size that does not fit four times in free memory is left out, for every
// strategy alike (managed requests are refused by the session beyond free memory anyway).
std::vector<std::size_t> sizes_that_fit(int device, sweep_depth depth, std::vector<std::string>& notes) {
  std::vector<std::size_t> sizes;
  for (const std::size_t bytes : sweep_sizes(depth)) {
    if (4 * bytes > query_free_memory(device)) {
      notes.push_back(fmt::format("{} left out: it does not fit four times in GPU {}'s free memory",
                                  format_byte_size(bytes), device));
      continue;
    }
    sizes.push_back(bytes);
  }
  return sizes;
}

// A strategy's curve while its use is swept: open while it is still measured at the next size.
struct open_curve {
  strategy_curve curve;
  bool open = false;
};

// The fastest strategy's time at the size measured before, and that size (see laggard_ratio).
struct size_before {
  std::optional<double> best_us;
  std::size_t bytes = 0;
};

// The in-flight depth is searched at the middle size, and in a thorough sweep at the smallest
// and the largest too.
std::vector<std::size_t> depth_sizes(const std::vector<std::size_t>& sizes, sweep_depth depth) {
  if (sizes.empty()) return {};
  const std::size_t middle = sizes[(sizes.size() - 1) / 2];
  if (depth == sweep_depth::thorough && sizes.size() > 2) return {sizes.front(), middle, sizes.back()};
  return {middle};
}

// The strategy whose input read once the profile finds fastest at `bytes`, or none.
const strategy_curve* fastest_input(const std::vector<strategy_curve>& curves, std::size_t bytes) {
  const strategy_curve* fastest = nullptr;
  double best = 0;
  for (const auto& c : curves) {
    if (c.use != transfer_use::input_once) continue;
    const auto us = estimate_us(c, bytes);
    if (us && (fastest == nullptr || *us < best)) {
      fastest = &c;
      best = *us;
    }
  }
  return fastest;
}

// The strategies whose in-flight depth is searched: the one the rules start from (where this
// GPU offers it) and the one the profile finds fastest at the middle size, where they differ.
std::vector<strategy_kind> depth_strategies(const device_caps& caps, const std::vector<strategy_curve>& curves,
                                            const std::vector<std::size_t>& sizes, std::size_t middle) {
  std::vector<strategy_kind> kinds{recommendation_for(classify(caps)).recommended};
  if (unavailable_reason(kinds.front(), caps)) kinds.clear();
  if (sizes.empty()) return kinds;
  const strategy_curve* fastest = fastest_input(curves, middle);
  if (fastest != nullptr && (kinds.empty() || fastest->strategy != kinds.front())) kinds.push_back(fastest->strategy);
  return kinds;
}

// The profile's measurements: each use's strategies swept size by size, then the in-flight
// depths. It holds what every step shares: the GPU, the sweep's depth, the progress callback and
// the run's profile and notes.
class profile_sweep {
 public:
  profile_sweep(int device, sweep_depth depth, const progress_function& progress, const device_caps& caps,
                calibration_run& out)
      : device_(device), depth_(depth), progress_(progress), caps_(caps), out_(out) {}

  // Size by size, every strategy at one size before the next, so each size knows the best time
  // of the one before it (see laggard_ratio).
  void sweep(transfer_use use, const std::vector<std::size_t>& sizes) {
    std::vector<open_curve> curves = start_curves(use);
    size_before before;
    for (const std::size_t bytes : sizes) measure_size(curves, use, bytes, before);
    for (auto& c : curves) out_.profile.curves.push_back(std::move(c.curve));
  }

  // The depth at which throughput stops rising, for the strategy the rules start from and for the
  // one the profile finds fastest at the middle size (when they differ).
  void search_depths(const std::vector<std::size_t>& sizes) {
    const std::size_t middle = sizes.empty() ? 0 : sizes[(sizes.size() - 1) / 2];
    const std::vector<std::size_t> at = depth_sizes(sizes, depth_);
    run_options search = cell_options(device_, depth_, middle);
    search.iterations.reset();
    // search_inflight_depth uses a quarter, >= 0.3 s
    search.window_seconds = depth_ == sweep_depth::thorough ? 1.2 : 0.6;
    for (const strategy_kind k : depth_strategies(caps_, out_.profile.curves, sizes, middle))
      for (const std::size_t bytes : at) search_depth(k, bytes, search);
  }

 private:
  // Every strategy that feeds host data, open unless this GPU cannot run it (then refused).
  [[nodiscard]] std::vector<open_curve> start_curves(transfer_use use) const {
    std::vector<open_curve> curves;
    for (const strategy_kind k : all_strategies) {
      // Data kept in GPU memory (the floor, peer) is not a way to feed host inputs.
      if (properties(k).path == data_path::resident) continue;
      open_curve c{.curve = {.strategy = k, .use = use, .refused = {}, .points = {}}};
      const auto why = unavailable_reason(k, caps_);
      if (why) c.curve.refused = *why;
      c.open = !why;
      curves.push_back(std::move(c));
    }
    return curves;
  }

  void measure_size(std::vector<open_curve>& curves, transfer_use use, std::size_t bytes, size_before& before) {
    const workload w = make_workload(builtin_request(std::string(engine_for(use)), bytes, device_, 2));
    const run_options options = cell_options(device_, depth_, bytes);
    std::optional<double> best_here;
    for (open_curve& c : curves) {
      if (!c.open) continue;
      if (lags(c.curve, before)) {
        leave_laggard(c, use, before);
        continue;
      }
      const std::optional<double> us = measure(c, use, bytes, w, options);
      if (us && (!best_here || *us < *best_here)) best_here = us;
    }
    before = {.best_us = best_here, .bytes = bytes};
  }

  // Far behind the best at a large size: not measured at the larger ones (see laggard_ratio).
  [[nodiscard]] bool lags(const strategy_curve& curve, const size_before& before) const {
    return depth_ != sweep_depth::thorough && before.best_us && before.bytes >= laggard_from_bytes &&
           !curve.points.empty() && curve.points.back().median_us > laggard_ratio * *before.best_us;
  }

  void leave_laggard(open_curve& c, transfer_use use, const size_before& before) {
    c.open = false;
    out_.notes.push_back(
        fmt::format("{} {}: not measured beyond {}, where it took {:.1f}x the best; its "
                    "larger sizes are extrapolated",
                    to_string(use), to_string(c.curve.strategy), format_byte_size(before.bytes),
                    c.curve.points.back().median_us / *before.best_us));
  }

  // One strategy at one size: its median, added to its curve; nothing where the curve ends here
  // (refused, failed or with outputs that do not match the reference).
  std::optional<double> measure(open_curve& c, transfer_use use, std::size_t bytes, const workload& w,
                                const run_options& options) {
    strategy_curve& curve = c.curve;
    if (progress_)
      progress_(fmt::format("{} {} {}", to_string(use), format_byte_size(bytes), to_string(curve.strategy)));
    const strategy_result r = run_cell(w, curve.strategy, options);
    if (!r.verdict.measured()) {
      // A refusal at one size (memory, usually) ends the curve there; smaller sizes stand.
      if (curve.points.empty())
        curve.refused = r.verdict.reason();
      else
        out_.notes.push_back(fmt::format("{} {}: stopped at {}: {}", to_string(use), to_string(curve.strategy),
                                         format_byte_size(bytes), r.verdict.reason()));
      c.open = false;
      return std::nullopt;
    }
    if (!r.verdict.output_matches) {
      curve.points.clear();
      curve.refused = fmt::format("outputs did not match the reference at {}", format_byte_size(bytes));
      c.open = false;
      return std::nullopt;
    }
    curve.points.push_back({bytes, r.figures.latency_us.median, r.figures.noise});
    return r.figures.latency_us.median;
  }

  void search_depth(strategy_kind k, std::size_t bytes, const run_options& search) {
    const workload w = make_workload(builtin_request("reduce", bytes, device_, 64));
    if (progress_) progress_(fmt::format("in-flight depth {} {}", to_string(k), format_byte_size(bytes)));
    const depth_search found = search_inflight_depth(w, k, search, run_cell, device_memory_reader({device_}));
    if (!found.depth) {
      out_.notes.push_back(
          fmt::format("in-flight depth of {} at {}: {}", to_string(k), format_byte_size(bytes), found.explanation));
      return;
    }
    out_.profile.inflight.push_back({k, bytes, *found.depth, found.explanation});
  }

  int device_;
  sweep_depth depth_;
  const progress_function& progress_;
  const device_caps& caps_;
  calibration_run& out_;
};

}  // namespace

std::string_view to_string(sweep_depth depth) noexcept {
  switch (depth) {
    case sweep_depth::quick:
      return "quick";
    case sweep_depth::standard:
      return "default";
    case sweep_depth::thorough:
      return "thorough";
  }
  return "default";
}

std::vector<std::size_t> sweep_sizes(sweep_depth depth) {
  switch (depth) {
    case sweep_depth::quick:
      return {64 * kib, 1 * mib, 16 * mib};
    case sweep_depth::standard:
      return {64 * kib, 1 * mib, 16 * mib, 64 * mib};
    case sweep_depth::thorough:
      return {64 * kib, 256 * kib, 1 * mib, 4 * mib, 16 * mib, 64 * mib, 256 * mib};
  }
  return {};
}

calibration_run calibrate(int device, sweep_depth depth, const progress_function& progress) {
  const auto started = std::chrono::steady_clock::now();
  const device_caps caps = query_device(device);
  calibration_run out;
  out.profile = profile_header(caps, depth);
  const std::vector<std::size_t> sizes = sizes_that_fit(device, depth, out.notes);
  profile_sweep run(device, depth, progress, caps, out);
  for (const transfer_use use : all_transfer_uses) run.sweep(use, sizes);
  run.search_depths(sizes);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace ferry::bench
