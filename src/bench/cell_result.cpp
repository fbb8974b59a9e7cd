#include "bench/cell_result.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ferry/bench/stopping.hpp"

namespace ferry::bench {
namespace {

double gbps(std::size_t bytes, const sample_stats& stage) {
  return stage.count == 0 || stage.median < 1.0 ? 0.0 : gigabytes_per_second(bytes, stage.median);
}

std::string check_detail(const check_tally& t) {
  return t.all_match ? fmt::format("{} elements compared with the device reference", t.compared) : t.mismatch;
}

}  // namespace

double quartile_spread(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const double low = percentile_of_sorted(samples, 0.25);
  return low > 0 ? percentile_of_sorted(samples, 0.75) / low - 1 : 0;
}

double relative_gap(double value, double baseline) noexcept { return baseline > 0 ? value / baseline - 1 : 0; }

void assemble_result(cell_samples& s, double wall_seconds, bool paired, const run_options& options,
                     const stopping_criterion& stop, strategy_result& r) {
  const strategy_kind strategy = parse_strategy(r.strategy);
  r.iterations = s.latency.size();
  r.latency_us = summarize(s.latency);
  r.fill_us = summarize(s.fill);
  r.h2d_us = summarize(s.h2d);
  r.compute_us = summarize(s.compute);
  r.d2h_us = summarize(s.d2h);
  r.enqueue_us = summarize(s.enqueue);
  r.cold_first_us = s.cold_first.value_or(0);
  if (s.cold_first) r.cold_first_percentile = percentile_rank(s.latency, *s.cold_first);
  r.wall_seconds = wall_seconds;
  r.relative_iqr = relative_iqr(r.latency_us);
  r.noise = median_noise(s.latency);
  if (paired) {
    r.throughput_per_s = throughput_per_second(s.requests, s.busy_seconds);
    r.throughput_noise = r.noise;  // one request at a time: the rate is 1 / (fill + latency)
  } else {
    r.throughput_per_s = throughput_per_second(s.requests, wall_seconds);
    r.throughput_noise = rate_noise(s.completed_at, wall_seconds);
  }
  r.max_noise = options.limits.max_noise;
  const sample_stats probe = summarize(s.host_probe);
  r.host_probe_us = probe.median;
  r.host_probe_spread = probe.count >= 2 && probe.min > 0 ? quartile_spread(s.host_probe) : 0;
  const sample_stats cuda = summarize(s.cuda_probe);
  r.cuda_probe_us = cuda.median;
  r.cuda_probe_spread = cuda.count >= 2 && cuda.min > 0 ? quartile_spread(s.cuda_probe) : 0;
  const bool host_changed = r.host_probe_spread > host_change_limit || r.cuda_probe_spread > cuda_change_limit;
  const bool judged_on_rate = options.window_seconds.has_value();
  r.noisy = (judged_on_rate ? r.throughput_noise : r.noise) > r.max_noise || host_changed;
  const std::string noise_text = judged_on_rate ? fmt::format("throughput noise {:.2f}%", 100 * r.throughput_noise)
                                                : fmt::format("median noise {:.2f}%", 100 * r.noise);
  r.stopped = s.stopped == stop_decision::time_cap
                  ? fmt::format("stopped at the {:.1f} s cap with {} ({})", wall_seconds, noise_text, stop.describe())
                  : fmt::format("{} requests in {:.2f} s, {} ({})", r.iterations, wall_seconds, noise_text,
                                stop.describe());
  if (r.host_probe_spread > host_change_limit)
    r.stopped += fmt::format("; the host CPU's speed changed during the cell: the host probe took {:.1f} to {:.1f} µs",
                             probe.min, probe.max);
  if (r.cuda_probe_spread > cuda_change_limit)
    r.stopped += fmt::format("; the CUDA driver's calls changed speed during the cell: the CUDA probe took {:.1f} to "
                             "{:.1f} µs",
                             cuda.min, cuda.max);
  const auto path = properties(strategy).path;
  if (path == data_path::copy || strategy == strategy_kind::managed_prefetch) {
    r.h2d_gbps = gbps(r.input_bytes, r.h2d_us);
    r.d2h_gbps = gbps(r.output_bytes, r.d2h_us);
  } else if (path == data_path::zero_copy && r.devices.size() <= 1 && r.inflight == 1 && r.clients == 1) {
    // Zero-copy has no copy stage: the engine reads its inputs and writes its outputs over the
    // link while it runs, so the bus rate is the bytes over the engine's event-timed span, the
    // same clock the copy stage is timed with. A lower bound: the engine's own work is in the
    // span too. Only for one request at a time, where no other request shares the span.
    r.h2d_gbps = gbps(r.input_bytes, r.compute_us);
    // A small output (reduce's 4 KB) is written in the span's last microseconds: no rate there.
    if (r.output_bytes >= r.input_bytes / 4) r.d2h_gbps = gbps(r.output_bytes, r.compute_us);
  }
  r.output_checked = s.checks.checked;
  r.output_matches = s.checks.checked && s.checks.all_match;
  r.check_detail = check_detail(s.checks);
}

side_run assemble_side_run(cell_samples& s, std::string_view steps) {
  side_run run;
  run.steps = std::string(steps);
  run.iterations = s.latency.size();
  run.latency_us = summarize(s.latency);
  run.noise = median_noise(s.latency);
  run.output_checked = s.checks.checked;
  run.output_matches = s.checks.checked && s.checks.all_match;
  run.check_detail = check_detail(s.checks);
  return run;
}

}  // namespace ferry::bench
