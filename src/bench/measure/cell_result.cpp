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

result_identity cell_identity(std::string engine, std::optional<strategy_kind> strategy, const run_options& options,
                              trial_schedule schedule) {
  result_identity id;
  id.strategy = strategy;
  id.engine = std::move(engine);
  id.inflight = options.session.inflight;
  id.clients = options.clients;
  id.devices = options.devices;
  id.graph = options.session.graph == graph_mode::on;
  id.warmed_up = options.warmup;
  id.input_writes = std::string(to_string(options.writes));
  id.schedule = std::string(to_string(schedule));
  return id;
}

double quartile_spread(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const double low = percentile_of_sorted(samples, 0.25);
  return low > 0 ? percentile_of_sorted(samples, 0.75) / low - 1 : 0;
}

namespace {

bool same_clocks(const clock_record& a, const clock_record& b) {
  return a.sm_mhz_min == b.sm_mhz_min && a.sm_mhz_max == b.sm_mhz_max && a.mem_mhz_min == b.mem_mhz_min &&
         a.mem_mhz_max == b.mem_mhz_max;
}

void merge_into(clock_record& merged, const clock_record& c) {
  merged.changed = merged.changed || c.changed || !same_clocks(merged, c);
  merged.sm_mhz_min = std::min(merged.sm_mhz_min, c.sm_mhz_min);
  merged.sm_mhz_max = std::max(merged.sm_mhz_max, c.sm_mhz_max);
  merged.mem_mhz_min = std::min(merged.mem_mhz_min, c.mem_mhz_min);
  merged.mem_mhz_max = std::max(merged.mem_mhz_max, c.mem_mhz_max);
  merged.samples += c.samples;
  auto& reasons = merged.throttle_reasons;
  for (const auto& reason : c.throttle_reasons)
    if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) reasons.push_back(reason);
}

}  // namespace

std::optional<clock_record> merge_clocks(const std::vector<trial_record>& trials) {
  std::optional<clock_record> merged;
  for (const auto& t : trials) {
    if (!t.clocks) continue;
    if (merged) {
      merge_into(*merged, *t.clocks);
    } else {
      merged = *t.clocks;
    }
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

namespace {

// The strategy's series of every trial pooled, and each trial's own figures.
struct pooled_cell {
  pooled series;
  std::vector<trial_figures> figures;
  double wall_seconds = 0;
  std::size_t device_bytes_used = 0;
  // One request at a time (every trial alike): rates are each series' own, see trial_record.
  bool paired = false;
};

pooled_cell pool(const std::vector<trial_record>& trials) {
  pooled_cell p;
  p.paired = !trials.empty() && trials.front().paired;
  for (const auto& t : trials) {
    add(p.series, t.strategy);
    p.figures.push_back(figures_of(t));
    p.wall_seconds += t.wall_seconds;
    p.device_bytes_used = std::max(p.device_bytes_used, t.device_bytes_used);
  }
  return p;
}

// The probes' samples summarised once: their medians and spreads are diagnostics, and a probe
// that moved too far makes the verdict noisy.
struct probe_summaries {
  sample_stats host, cuda, copy;
  double host_spread = 0, cuda_spread = 0, copy_spread = 0;
};

double spread_of(const sample_stats& stats, const std::vector<double>& samples) {
  return stats.count >= 2 && stats.min > 0 ? quartile_spread(samples) : 0;
}

probe_summaries summarize_probes(const pooled& s) {
  probe_summaries p{.host = summarize(s.host_probe), .cuda = summarize(s.cuda_probe), .copy = summarize(s.host_copy)};
  p.host_spread = spread_of(p.host, s.host_probe);
  p.cuda_spread = spread_of(p.cuda, s.cuda_probe);
  p.copy_spread = spread_of(p.copy, s.host_copy);
  return p;
}

// ---- figures -------------------------------------------------------------------------------

void fill_series(result_figures& f, const pooled& s) {
  f.iterations = s.latency.size();
  f.latency_us = summarize(s.latency);
  f.fill_us = summarize(s.fill);
  f.h2d_us = summarize(s.h2d);
  f.compute_us = summarize(s.compute);
  f.d2h_us = summarize(s.d2h);
  f.enqueue_us = summarize(s.enqueue);
  f.gpu_us = summarize(s.gpu);
  f.relative_iqr = relative_iqr(f.latency_us);
}

// The first trial's first request: the one a fresh process pays.
void fill_cold_first(result_figures& f, const std::vector<trial_record>& trials, const std::vector<double>& latency) {
  const std::optional<double> cold = trials.empty() ? std::nullopt : trials.front().strategy.cold_first;
  f.cold_first_us = cold.value_or(0);
  if (cold) f.cold_first_percentile = percentile_rank(latency, *cold);
}

void fill_rates_and_noise(result_figures& f, const std::vector<trial_record>& trials, const pooled_cell& p) {
  const pooled& s = p.series;
  f.throughput_per_s = throughput_per_second(s.requests, p.paired ? s.busy_seconds : p.wall_seconds);
  const noises n = noises_of(trials, p.figures, s.latency, s.gpu);
  f.noise = n.within;
  f.trial_noise = n.between;
  f.gpu_noise = n.gpu_within;
  f.gpu_trial_noise = n.gpu_between;
  f.throughput_noise = n.rate_within;
  f.throughput_trial_noise = n.rate_between;
}

// The bus rates: bytes over the copy stages' medians, or over the engine's span for zero-copy.
void fill_link_rates(result_figures& f, const result_identity& id) {
  const strategy_kind strategy = id.strategy.value_or(strategy_kind::pinned);  // a cell that ran has one
  const auto path = properties(strategy).path;
  if (path == data_path::copy || strategy == strategy_kind::managed_prefetch) {
    f.h2d_gbps = gbps(id.input_bytes, f.h2d_us);
    f.d2h_gbps = gbps(id.output_bytes, f.d2h_us);
    return;
  }
  const bool alone = id.devices.size() <= 1 && id.inflight == 1 && id.clients == 1;
  if (path != data_path::zero_copy || !alone) return;
  // Zero-copy has no copy stage: the engine reads its inputs and writes its outputs over the
  // link while it runs, so the bus rate is the bytes over the engine's event-timed span, the
  // same clock the copy stage is timed with. A lower bound: the engine's own work is in the
  // span too. Only for one request at a time, where no other request shares the span.
  f.h2d_gbps = gbps(id.input_bytes, f.compute_us);
  // A small output (reduce's 4 KB) is written in the span's last microseconds: no rate there.
  if (id.output_bytes >= id.input_bytes / 4) f.d2h_gbps = gbps(id.output_bytes, f.compute_us);
}

void fill_figures(result_figures& f, const result_identity& id, const std::vector<trial_record>& trials,
                  const pooled_cell& p) {
  f.trials = p.figures;
  f.wall_seconds = p.wall_seconds;
  f.device_bytes_used = std::max(f.device_bytes_used, p.device_bytes_used);
  fill_series(f, p.series);
  fill_cold_first(f, trials, p.series.latency);
  fill_rates_and_noise(f, trials, p);
  fill_link_rates(f, id);
}

// ---- diagnostics ---------------------------------------------------------------------------

// Each GPU's share of the timed requests (warm-ups and checks excluded) over every trial.
std::vector<std::size_t> gpu_shares(const std::vector<trial_record>& trials) {
  std::vector<std::size_t> shares(trials.front().requests_per_gpu.size(), 0);
  for (const auto& t : trials)
    for (std::size_t i = 0; i < shares.size() && i < t.requests_per_gpu.size(); ++i) shares[i] += t.requests_per_gpu[i];
  return shares;
}

// How the load was spread over several GPUs, in words; empty for one GPU.
std::string requests_per_gpu(const std::vector<trial_record>& trials, const std::vector<int>& devices) {
  if (trials.empty() || trials.front().requests_per_gpu.empty()) return "";
  const std::vector<std::size_t> shares = gpu_shares(trials);
  std::string text;
  for (std::size_t i = 0; i < shares.size(); ++i)
    text +=
        fmt::format("{}GPU {}: {}", i ? ", " : "", i < devices.size() ? devices[i] : static_cast<int>(i), shares[i]);
  return "requests per GPU: " + text;
}

void fill_diagnostics(result_diagnostics& d, const std::vector<trial_record>& trials, const probe_summaries& probes,
                      const std::vector<int>& devices) {
  d.host_probe_us = probes.host.median;
  d.host_probe_spread = probes.host_spread;
  d.cuda_probe_us = probes.cuda.median;
  d.cuda_probe_spread = probes.cuda_spread;
  d.host_copy_gbps = probes.copy.median;
  d.host_copy_spread = probes.copy_spread;
  d.clocks = merge_clocks(trials);
  if (!d.clocks && d.clocks_note.empty()) d.clocks_note = "no GPU clock readings (NVML unavailable)";
  if (d.recipe) d.recipe = assemble_side_run(trials, true, d.recipe->steps);
  if (d.floor) d.floor = assemble_side_run(trials, false, d.floor->steps);
  if (std::string spread = requests_per_gpu(trials, devices); !spread.empty()) d.notes.push_back(std::move(spread));
}

// ---- verdict -------------------------------------------------------------------------------

bool host_changed(const probe_summaries& probes) {
  return probes.host_spread > host_change_limit || probes.cuda_spread > cuda_change_limit;
}

// What moved the host under the cell, in words ("" when nothing did).
std::string host_change_text(const probe_summaries& probes) {
  std::string text;
  if (probes.host_spread > host_change_limit)
    text += fmt::format("; the host CPU's speed changed during the cell: the host probe took {:.1f} to {:.1f} µs",
                        probes.host.min, probes.host.max);
  if (probes.cuda_spread > cuda_change_limit)
    text += fmt::format(
        "; the CUDA driver's calls changed speed during the cell: the CUDA probe took {:.1f} to "
        "{:.1f} µs",
        probes.cuda.min, probes.cuda.max);
  return text;
}

// How sampling ended: the trials, the requests, the noise of the judged figure, the decision.
struct stop_context {
  std::size_t trials = 0;
  trials_decision how = trials_decision::settled;
  const std::string& stop;
  const sampling_limits& limits;
  bool judged_on_rate = false;
};

std::string stopped_text(const result_identity& id, const result_figures& f, const stop_context& c) {
  const std::string noise_text =
      c.judged_on_rate
          ? fmt::format("throughput noise {:.2f}% within trials, {:.2f}% between", 100 * f.throughput_noise,
                        100 * f.throughput_trial_noise)
          : fmt::format("median noise {:.2f}% within trials, {:.2f}% between", 100 * f.noise, 100 * f.trial_noise);
  return fmt::format("{} trial{} ({}), {} requests in {:.2f} s, {}: {} (each trial {})", c.trials,
                     c.trials == 1 ? "" : "s", id.schedule.empty() ? "alone" : id.schedule, f.iterations,
                     f.wall_seconds, noise_text, decision_text(c.how, c.trials, c.limits), c.stop);
}

void fill_verdict(result_verdict& v, const result_identity& id, const result_figures& f, const pooled& s,
                  const probe_summaries& probes, const stop_context& c) {
  v.output_checked = s.checks.checked;
  v.output_matches = s.checks.checked && s.checks.all_match;
  v.check_detail = check_detail(s.checks);
  v.max_noise = c.limits.max_noise;
  v.noisy = judged_noise(f, c.judged_on_rate).relative > v.max_noise || host_changed(probes);
  v.stopped = stopped_text(id, f, c) + host_change_text(probes);
}

}  // namespace

strategy_result assemble_result(const std::vector<trial_record>& trials, const run_options& options,
                                trials_decision how, const std::string& stop, strategy_result cell) {
  const pooled_cell p = pool(trials);
  const probe_summaries probes = summarize_probes(p.series);
  cell.identity.l2_flushed = p.paired && options.l2_flush;
  fill_figures(cell.figures, cell.identity, trials, p);
  fill_diagnostics(cell.diagnostics, trials, probes, cell.identity.devices);
  fill_verdict(cell.verdict, cell.identity, cell.figures, p.series, probes,
               {.trials = trials.size(),
                .how = how,
                .stop = stop,
                .limits = options.limits,
                .judged_on_rate = options.window_seconds.has_value()});
  return cell;
}

}  // namespace ferry::bench
