#include "bench/measure/cell_result.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ferry/bench/stats.hpp"

namespace ferry::bench {
namespace {

double gbps(std::size_t bytes, const sample_stats& stage) {
  return stage.count == 0 || stage.median < 1.0 ? 0.0 : gigabytes_per_second(bytes, stage.median);
}

std::string check_detail(const check_tally& t) {
  return t.all_match ? fmt::format("{} elements compared with the device reference", t.compared) : t.mismatch;
}

// One series' samples over every trial, in trial order.
struct pooled {
  std::vector<double> latency, fill, h2d, compute, d2h, enqueue, gpu, host_probe, cuda_probe, host_copy;
  check_tally checks;
  std::size_t requests = 0;
  double busy_seconds = 0;
};

void append(std::vector<double>& to, const std::vector<double>& from) { to.insert(to.end(), from.begin(), from.end()); }

void add(pooled& p, const cell_samples& s) {
  append(p.latency, s.latency);
  append(p.fill, s.fill);
  append(p.h2d, s.h2d);
  append(p.compute, s.compute);
  append(p.d2h, s.d2h);
  append(p.enqueue, s.enqueue);
  append(p.gpu, s.gpu);
  append(p.host_probe, s.host_probe);
  append(p.cuda_probe, s.cuda_probe);
  append(p.host_copy, s.host_copy);
  p.requests += s.requests;
  p.busy_seconds += s.busy_seconds;
  if (s.checks.checked) {
    p.checks.checked = true;
    p.checks.compared += s.checks.compared;
    if (!s.checks.all_match && p.checks.all_match) {
      p.checks.all_match = false;
      p.checks.mismatch = s.checks.mismatch;
    }
  }
}

// A trial's figures. One request at a time, the rate is the series' own (its requests over their
// fill and latency) and as noisy as the median; with clients, requests over the window.
trial_figures figures_of(const trial_record& t) {
  trial_figures f;
  f.started_seconds = t.started_seconds;
  f.wall_seconds = t.wall_seconds;
  f.iterations = t.strategy.latency.size();
  f.median_us = median_of(t.strategy.latency);
  f.noise = median_noise(t.strategy.latency);
  f.gpu_median_us = median_of(t.strategy.gpu);
  if (t.paired) {
    f.throughput_per_s = throughput_per_second(t.strategy.requests, t.strategy.busy_seconds);
    f.throughput_noise = f.noise;
  } else {
    f.throughput_per_s = throughput_per_second(t.strategy.requests, t.wall_seconds);
    f.throughput_noise = rate_noise(t.strategy.completed_at, t.wall_seconds);
  }
  return f;
}

// The noise of the pooled rate within trials: each trial's rate noise, weighted by its share of
// the time (the pooled rate is their time-weighted mean), as independent estimates combine.
double pooled_rate_noise(const std::vector<trial_figures>& figures) {
  double total = 0;
  for (const auto& f : figures) total += f.wall_seconds;
  if (total <= 0) return 1.0;
  double squares = 0;
  for (const auto& f : figures) {
    const double w = f.wall_seconds / total;
    squares += w * w * f.throughput_noise * f.throughput_noise;
  }
  return std::sqrt(squares);
}

struct noises {
  double within = 0;
  double between = 0;
  double rate_within = 0;
  double rate_between = 0;
  double gpu_within = 0;
  double gpu_between = 0;
};

noises noises_of(const std::vector<trial_record>& trials, const std::vector<trial_figures>& figures,
                 const std::vector<double>& pooled_latency, const std::vector<double>& pooled_gpu) {
  noises n;
  n.within = median_noise(pooled_latency);
  std::vector<double> medians, rates, gpu_medians;
  for (const auto& f : figures) {
    medians.push_back(f.median_us);
    rates.push_back(f.throughput_per_s);
    if (f.gpu_median_us > 0) gpu_medians.push_back(f.gpu_median_us);
  }
  n.between = trial_noise(medians);
  n.rate_between = trial_noise(rates);
  // Every trial or none has GPU times (a trial of event-timed requests has them all).
  if (!pooled_gpu.empty()) {
    n.gpu_within = median_noise(pooled_gpu);
    if (gpu_medians.size() == figures.size()) n.gpu_between = trial_noise(gpu_medians);
  }
  n.rate_within = !trials.empty() && trials.front().paired ? n.within : pooled_rate_noise(figures);
  return n;
}

side_run assemble_side_run(const std::vector<trial_record>& trials, bool recipe, std::string_view steps) {
  pooled p;
  for (const auto& t : trials) {
    const auto& series = recipe ? t.recipe : t.floor;
    if (series) add(p, *series);
  }
  side_run run;
  run.steps = std::string(steps);
  run.iterations = p.latency.size();
  run.latency_us = summarize(p.latency);
  run.noise = median_noise(p.latency);
  run.output_checked = p.checks.checked;
  run.output_matches = p.checks.checked && p.checks.all_match;
  run.check_detail = check_detail(p.checks);
  return run;
}

std::string decision_text(trials_decision how, std::size_t trials, const sampling_limits& limits) {
  switch (how) {
    case trials_decision::more:
    case trials_decision::settled:
      return "settled";
    case trials_decision::trial_cap:
      return fmt::format("stopped at the {}-trial cap", trials);
    case trials_decision::time_cap:
      return fmt::format("stopped at the {:.1f} s cap", limits.max_seconds);
  }
  return "";
}

}  // namespace

strategy_result cell_identity(std::string engine, std::optional<strategy_kind> strategy, const run_options& options,
                              trial_schedule schedule) {
  strategy_result r;
  r.strategy = strategy;
  r.engine = std::move(engine);
  r.inflight = options.session.inflight;
  r.clients = options.clients;
  r.devices = options.devices;
  r.graph = options.session.graph == graph_mode::on;
  r.warmed_up = options.warmup;
  r.input_writes = std::string(to_string(options.writes));
  r.schedule = std::string(to_string(schedule));
  return r;
}

double quartile_spread(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const double low = percentile_of_sorted(samples, 0.25);
  return low > 0 ? percentile_of_sorted(samples, 0.75) / low - 1 : 0;
}

std::optional<clock_record> merge_clocks(const std::vector<trial_record>& trials) {
  std::optional<clock_record> merged;
  for (const auto& t : trials) {
    if (!t.clocks) continue;
    const clock_record& c = *t.clocks;
    if (!merged) {
      merged = c;
      continue;
    }
    merged->changed = merged->changed || c.changed || c.sm_mhz_min != merged->sm_mhz_min ||
                      c.sm_mhz_max != merged->sm_mhz_max || c.mem_mhz_min != merged->mem_mhz_min ||
                      c.mem_mhz_max != merged->mem_mhz_max;
    merged->sm_mhz_min = std::min(merged->sm_mhz_min, c.sm_mhz_min);
    merged->sm_mhz_max = std::max(merged->sm_mhz_max, c.sm_mhz_max);
    merged->mem_mhz_min = std::min(merged->mem_mhz_min, c.mem_mhz_min);
    merged->mem_mhz_max = std::max(merged->mem_mhz_max, c.mem_mhz_max);
    merged->samples += c.samples;
    for (const auto& reason : c.throttle_reasons)
      if (std::find(merged->throttle_reasons.begin(), merged->throttle_reasons.end(), reason) ==
          merged->throttle_reasons.end())
        merged->throttle_reasons.push_back(reason);
  }
  return merged;
}

double judged_noise_of(const std::vector<trial_record>& trials, bool throughput) {
  if (trials.empty()) return 1.0;
  std::vector<trial_figures> figures;
  std::vector<double> latency, gpu;
  for (const auto& t : trials) {
    figures.push_back(figures_of(t));
    append(latency, t.strategy.latency);
    append(gpu, t.strategy.gpu);
  }
  const noises n = noises_of(trials, figures, latency, gpu);
  return throughput ? std::max(n.rate_within, n.rate_between) : std::max(n.within, n.between);
}

strategy_result assemble_result(const std::vector<trial_record>& trials, const run_options& options,
                                trials_decision how, const std::string& stop, strategy_result cell) {
  strategy_result& r = cell;
  const strategy_kind strategy = r.strategy.value_or(strategy_kind::pinned);  // a cell that ran has one
  pooled s;
  r.trials.clear();
  r.wall_seconds = 0;
  for (const auto& t : trials) {
    add(s, t.strategy);
    r.trials.push_back(figures_of(t));
    r.wall_seconds += t.wall_seconds;
    r.device_bytes_used = std::max(r.device_bytes_used, t.device_bytes_used);
  }
  const bool paired = !trials.empty() && trials.front().paired;
  r.l2_flushed = paired && options.l2_flush;
  r.iterations = s.latency.size();
  r.latency_us = summarize(s.latency);
  r.fill_us = summarize(s.fill);
  r.h2d_us = summarize(s.h2d);
  r.compute_us = summarize(s.compute);
  r.d2h_us = summarize(s.d2h);
  r.enqueue_us = summarize(s.enqueue);
  r.gpu_us = summarize(s.gpu);
  // The first trial's first request: the one a fresh process pays.
  const std::optional<double> cold = trials.empty() ? std::nullopt : trials.front().strategy.cold_first;
  r.cold_first_us = cold.value_or(0);
  if (cold) r.cold_first_percentile = percentile_rank(s.latency, *cold);
  r.relative_iqr = relative_iqr(r.latency_us);
  const noises n = noises_of(trials, r.trials, s.latency, s.gpu);
  r.noise = n.within;
  r.trial_noise = n.between;
  r.gpu_noise = n.gpu_within;
  r.gpu_trial_noise = n.gpu_between;
  r.throughput_per_s =
      paired ? throughput_per_second(s.requests, s.busy_seconds) : throughput_per_second(s.requests, r.wall_seconds);
  r.throughput_noise = n.rate_within;
  r.throughput_trial_noise = n.rate_between;
  r.max_noise = options.limits.max_noise;
  const sample_stats probe = summarize(s.host_probe);
  r.host_probe_us = probe.median;
  r.host_probe_spread = probe.count >= 2 && probe.min > 0 ? quartile_spread(s.host_probe) : 0;
  const sample_stats cuda = summarize(s.cuda_probe);
  r.cuda_probe_us = cuda.median;
  r.cuda_probe_spread = cuda.count >= 2 && cuda.min > 0 ? quartile_spread(s.cuda_probe) : 0;
  const sample_stats copy = summarize(s.host_copy);
  r.host_copy_gbps = copy.median;
  r.host_copy_spread = copy.count >= 2 && copy.min > 0 ? quartile_spread(s.host_copy) : 0;
  const bool host_changed = r.host_probe_spread > host_change_limit || r.cuda_probe_spread > cuda_change_limit;
  const bool judged_on_rate = options.window_seconds.has_value();
  r.noisy = judged_noise(r, judged_on_rate).relative > r.max_noise || host_changed;
  const std::string noise_text = judged_on_rate ? fmt::format("throughput noise {:.2f}% within trials, {:.2f}% between",
                                                              100 * r.throughput_noise, 100 * r.throughput_trial_noise)
                                                : fmt::format("median noise {:.2f}% within trials, {:.2f}% between",
                                                              100 * r.noise, 100 * r.trial_noise);
  r.stopped = fmt::format("{} trial{} ({}), {} requests in {:.2f} s, {}: {} (each trial {})", trials.size(),
                          trials.size() == 1 ? "" : "s", r.schedule.empty() ? "alone" : r.schedule, r.iterations,
                          r.wall_seconds, noise_text, decision_text(how, trials.size(), options.limits), stop);
  if (r.host_probe_spread > host_change_limit)
    r.stopped += fmt::format("; the host CPU's speed changed during the cell: the host probe took {:.1f} to {:.1f} µs",
                             probe.min, probe.max);
  if (r.cuda_probe_spread > cuda_change_limit)
    r.stopped += fmt::format(
        "; the CUDA driver's calls changed speed during the cell: the CUDA probe took {:.1f} to "
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
  r.clocks = merge_clocks(trials);
  if (!r.clocks && r.clocks_note.empty()) r.clocks_note = "no GPU clock readings (NVML unavailable)";
  if (r.recipe) r.recipe = assemble_side_run(trials, true, r.recipe->steps);
  if (r.floor) r.floor = assemble_side_run(trials, false, r.floor->steps);
  if (!trials.empty() && !trials.front().requests_per_gpu.empty()) {
    // How the load was spread: each GPU's share of the requests (warm-ups and checks excluded).
    std::vector<std::size_t> shares(trials.front().requests_per_gpu.size(), 0);
    for (const auto& t : trials)
      for (std::size_t i = 0; i < shares.size() && i < t.requests_per_gpu.size(); ++i)
        shares[i] += t.requests_per_gpu[i];
    std::string text;
    for (std::size_t i = 0; i < shares.size(); ++i)
      text += fmt::format("{}GPU {}: {}", i ? ", " : "", i < r.devices.size() ? r.devices[i] : static_cast<int>(i),
                          shares[i]);
    r.notes.push_back("requests per GPU: " + text);
  }
  return cell;
}

}  // namespace ferry::bench
