#include "ferry/bench/compare.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/report/report_cells.hpp"
#include "ferry/bench/stats.hpp"

namespace ferry::bench {
namespace {

using cell_key = std::tuple<std::string, std::size_t, std::optional<strategy_kind>, int, int, std::vector<int>, bool,
                            bool, std::string>;

cell_key key_of(const result_identity& id) {
  return {id.engine,  id.input_bytes, id.strategy,  id.inflight,    id.clients,
          id.devices, id.graph,       id.warmed_up, id.input_writes};
}

bool usable(const strategy_result& r) { return r.verdict.measured() && r.figures.iterations > 0; }

// The cell's judged noise (the larger of within and between its trials), or an estimate from
// its spread where the report predates noise figures.
noise_estimate noise_of(const result_figures& f, bool throughput, bool& estimated) {
  const noise_estimate judged = judged_noise(f, throughput);
  if (judged.relative > 0) return judged;
  if (f.iterations < 2) return {.relative = 1.0};
  estimated = true;
  return {.relative = 0.93 * f.relative_iqr / std::sqrt(static_cast<double>(f.iterations))};
}

// A change beyond the threshold is better or worse: a higher rate is better, a longer time worse.
cell_change judge(double change, double threshold, bool higher_is_better) {
  if (std::abs(change) <= threshold) return cell_change::same;
  return (change > 0) == higher_is_better ? cell_change::better : cell_change::worse;
}

bool has_gpu_figure(const result_figures& f) { return f.gpu_us.count > 0 && f.gpu_us.median > 0; }

// One figure of both reports judged against both noises: a change beyond the threshold the two
// noises make is better or worse.
figure_comparison judge_figure(double a, double b, const noise_estimate& na, const noise_estimate& nb,
                               bool higher_is_better) {
  figure_comparison f;
  f.a = a;
  f.b = b;
  f.noise_a = na.relative;
  f.noise_b = nb.relative;
  f.between_trials = !std::isinf(na.dof) || !std::isinf(nb.dof);
  f.change = a > 0 ? b / a - 1 : 0;
  f.threshold = difference_threshold(na, nb);
  f.verdict = judge(f.change, f.threshold, higher_is_better);
  return f;
}

// The GPU's time per request, with its own judged noise (1, unknown, for a single sample).
figure_comparison compare_gpu(const result_figures& a, const result_figures& b) {
  const auto noise = [](const result_figures& f) {
    return f.gpu_us.count < 2 ? noise_estimate{.relative = 1.0} : judged_gpu_noise(f);
  };
  return judge_figure(a.gpu_us.median, b.gpu_us.median, noise(a), noise(b), false);
}

// Why the host takes part in both cells' GPU figure (see cell_comparison::gpu_host_part), or "".
std::string host_part_of_gpu_figure(const strategy_result& a, const strategy_result& b) {
  if (a.identity.strategy) {
    const std::string_view how = properties(*a.identity.strategy).host_in_gpu_span;
    if (!how.empty()) return std::string(how);
  }
  const double probe = std::max(a.diagnostics.cuda_probe_us, b.diagnostics.cuda_probe_us);
  const double span = std::min(a.figures.gpu_us.median, b.figures.gpu_us.median);
  if (probe > 0 && span < launch_bound_gpu_span * probe)
    return fmt::format(
        "a GPU span of {} is under {:g} of the host's CUDA-call probes ({}): the host's launches "
        "are a large part of it",
        cells::format_us(span), launch_bound_gpu_span, cells::format_us(probe));
  return "";
}

// How far the host's and the driver's probes moved from A to B (0 where either report has none).
void set_probe_ratios(cell_comparison& c, const result_diagnostics& a, const result_diagnostics& b) {
  if (a.host_probe_us > 0 && b.host_probe_us > 0) c.host_ratio = b.host_probe_us / a.host_probe_us;
  if (a.cuda_probe_us > 0 && b.cuda_probe_us > 0) c.cuda_ratio = b.cuda_probe_us / a.cuda_probe_us;
  if (a.host_copy_gbps > 0 && b.host_copy_gbps > 0) c.host_copy_ratio = b.host_copy_gbps / a.host_copy_gbps;
}

cell_comparison compare_cell(const strategy_result& a, const strategy_result& b, bool throughput) {
  cell_comparison c;
  c.label = cells::result_label(a.identity);
  c.input_bytes = a.identity.input_bytes;
  c.metric = throughput ? "req/s" : "median µs";
  if (!usable(a) || !usable(b)) {
    c.verdict = cell_change::not_measured;
    return c;
  }
  const noise_estimate na = noise_of(a.figures, throughput, c.noise_estimated);
  const noise_estimate nb = noise_of(b.figures, throughput, c.noise_estimated);
  static_cast<figure_comparison&>(c) =
      judge_figure(throughput ? a.figures.throughput_per_s : a.figures.latency_us.median,
                   throughput ? b.figures.throughput_per_s : b.figures.latency_us.median, na, nb, throughput);
  set_probe_ratios(c, a.diagnostics, b.diagnostics);
  if (has_gpu_figure(a.figures) && has_gpu_figure(b.figures)) {
    c.gpu = compare_gpu(a.figures, b.figures);
    c.gpu_host_part = host_part_of_gpu_figure(a, b);
  } else
    c.gpu_note = fmt::format("no GPU figure in {} (a report older than the figure): judged end to end only",
                             has_gpu_figure(a.figures)   ? "B"
                             : has_gpu_figure(b.figures) ? "A"
                                                         : "either report");
  return c;
}

std::string_view verdict_name(cell_change v) {
  switch (v) {
    case cell_change::same:
      return "same";
    case cell_change::better:
      return "better";
    case cell_change::worse:
      return "worse";
    case cell_change::only_in_a:
      return "only in A";
    case cell_change::only_in_b:
      return "only in B";
    case cell_change::not_measured:
      return "not measured";
  }
  return "";
}

bool differs(cell_change v) { return v == cell_change::better || v == cell_change::worse; }

}  // namespace

std::string_view to_string(judged_figure f) noexcept {
  switch (f) {
    case judged_figure::end_to_end:
      return "end-to-end";
    case judged_figure::gpu:
      return "gpu";
    case judged_figure::both:
      return "both";
  }
  return "";
}

std::optional<judged_figure> parse_judged_figure(std::string_view text) noexcept {
  for (const auto f : {judged_figure::end_to_end, judged_figure::gpu, judged_figure::both})
    if (text == to_string(f)) return f;
  return std::nullopt;
}

std::string_view cell_comparison::moved() const noexcept {
  const bool end_to_end = differs(verdict);
  const bool on_gpu = gpu && differs(gpu->verdict);
  if (end_to_end && on_gpu) return "both";
  if (end_to_end) return "end-to-end";
  if (on_gpu) return "gpu";
  return "neither";
}

std::vector<std::string> host_differences(const machine_info& a, const machine_info& b) {
  std::vector<std::string> differ;
  const auto version = [](int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); };
  if (a.gpu_name != b.gpu_name) differ.push_back(fmt::format("GPU: {} against {}", a.gpu_name, b.gpu_name));
  if (a.driver_version != b.driver_version)
    differ.push_back(fmt::format("CUDA driver: {} against {}", version(a.driver_version), version(b.driver_version)));
  if (a.runtime_version != b.runtime_version)
    differ.push_back(
        fmt::format("CUDA runtime: {} against {}", version(a.runtime_version), version(b.runtime_version)));
  if (a.platform != b.platform || a.pcie != b.pcie)
    differ.push_back(fmt::format("link: {} {} against {} {}", a.platform, a.pcie, b.platform, b.pcie));
  return differ;
}

std::string overlap_problem(const report_comparison& comparison) {
  const auto counts = fmt::format("A measured {} cell{}, B {}", comparison.measured_a,
                                  comparison.measured_a == 1 ? "" : "s", comparison.measured_b);
  const char* match = "cells match by engine, input size, strategy and run settings";
  const std::size_t common = comparison.compared;
  if (common == 0) return fmt::format("the reports have no measured cell in common ({}; {})", counts, match);
  if (2 * common >= comparison.measured_a && 2 * common >= comparison.measured_b) return "";
  // What the cells in common are of each side, in words true of each: all of one report's cells
  // can be a small part of the other's.
  const auto share = [common](const char* side, std::size_t measured) {
    if (common == measured)
      return measured == 1 ? fmt::format("{}'s only cell", side) : fmt::format("all of {}'s {}", side, measured);
    if (2 * common < measured) return fmt::format("fewer than half of {}'s {}", side, measured);
    return fmt::format("{} of {}'s {}", common, side, measured);
  };
  return fmt::format("the reports have only {} measured cell{} in common: {}, {} ({})", common, common == 1 ? "" : "s",
                     share("A", comparison.measured_a), share("B", comparison.measured_b), match);
}

std::vector<regression> regressions(const report_comparison& comparison, double percent, judged_figure on) {
  std::vector<regression> worse;
  const auto beyond = [percent](cell_change verdict, double change) {
    return verdict == cell_change::worse && std::abs(change) * 100 > percent;
  };
  for (const auto& c : comparison.cells) {
    // A cell without a GPU figure is judged end to end, whatever `on` names.
    const bool end_to_end = on != judged_figure::gpu || !c.gpu;
    const bool on_gpu = on != judged_figure::end_to_end && c.gpu;
    if (end_to_end && beyond(c.verdict, c.change))
      worse.push_back({.cell = &c, .figure = "end-to-end", .change = c.change});
    if (on_gpu && beyond(c.gpu->verdict, c.gpu->change))
      worse.push_back({.cell = &c, .figure = "gpu", .change = c.gpu->change});
  }
  return worse;
}

report_comparison compare_reports(const bench_report& a, const bench_report& b) {
  const bool throughput = a.objective == "throughput" || b.objective == "throughput";
  report_comparison out;
  out.metric = throughput ? "req/s" : "median µs";
  std::vector<bool> matched(b.results.size(), false);
  for (const auto& ra : a.results) {
    const auto key = key_of(ra.identity);
    const auto it =
        std::find_if(b.results.begin(), b.results.end(), [&](const auto& rb) { return key_of(rb.identity) == key; });
    if (it == b.results.end()) {
      cell_comparison only;
      only.label = cells::result_label(ra.identity);
      only.input_bytes = ra.identity.input_bytes;
      only.verdict = cell_change::only_in_a;
      out.cells.push_back(std::move(only));
      continue;
    }
    matched[static_cast<std::size_t>(it - b.results.begin())] = true;
    out.cells.push_back(compare_cell(ra, *it, throughput));
  }
  for (std::size_t i = 0; i < b.results.size(); ++i)
    if (!matched[i]) {
      cell_comparison only;
      only.label = cells::result_label(b.results[i].identity);
      only.input_bytes = b.results[i].identity.input_bytes;
      only.verdict = cell_change::only_in_b;
      out.cells.push_back(std::move(only));
    }
  out.differing = static_cast<std::size_t>(std::count_if(out.cells.begin(), out.cells.end(), [](const auto& c) {
    return c.verdict == cell_change::better || c.verdict == cell_change::worse;
  }));
  out.measured_a = static_cast<std::size_t>(std::count_if(a.results.begin(), a.results.end(), usable));
  out.measured_b = static_cast<std::size_t>(std::count_if(b.results.begin(), b.results.end(), usable));
  out.compared = static_cast<std::size_t>(std::count_if(out.cells.begin(), out.cells.end(), [](const auto& c) {
    return c.verdict == cell_change::same || c.verdict == cell_change::better || c.verdict == cell_change::worse;
  }));
  for (const auto& c : out.cells) {
    if (!c.gpu) continue;
    ++out.gpu_compared;
    if (differs(c.gpu->verdict)) ++out.gpu_differing;
  }
  return out;
}

nlohmann::json to_json(const report_comparison& comparison) {
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& c : comparison.cells) {
    nlohmann::json gpu = nullptr;
    if (c.gpu)
      gpu = {{"figure", "gpu"},
             {"metric", "median GPU µs"},
             {"a", c.gpu->a},
             {"b", c.gpu->b},
             {"noise_a", c.gpu->noise_a},
             {"noise_b", c.gpu->noise_b},
             {"between_trials", c.gpu->between_trials},
             {"change", c.gpu->change},
             {"threshold", c.gpu->threshold},
             {"verdict", verdict_name(c.gpu->verdict)}};
    cells.push_back({{"label", c.label},
                     {"input_bytes", c.input_bytes},
                     {"figure", "end-to-end"},
                     {"metric", c.metric},
                     {"a", c.a},
                     {"b", c.b},
                     {"noise_a", c.noise_a},
                     {"noise_b", c.noise_b},
                     {"between_trials", c.between_trials},
                     {"change", c.change},
                     {"threshold", c.threshold},
                     {"noise_estimated", c.noise_estimated},
                     {"host_ratio", c.host_ratio},
                     {"cuda_ratio", c.cuda_ratio},
                     {"host_copy_ratio", c.host_copy_ratio},
                     {"verdict", verdict_name(c.verdict)},
                     {"gpu", std::move(gpu)},
                     {"gpu_note", c.gpu_note},
                     {"gpu_host_part", c.gpu_host_part},
                     {"moved", c.moved()}});
  }
  return {{"metric", comparison.metric},
          {"figures", {"end-to-end", "gpu"}},
          {"differing", comparison.differing},
          {"gpu_differing", comparison.gpu_differing},
          {"measured_a", comparison.measured_a},
          {"measured_b", comparison.measured_b},
          {"compared", comparison.compared},
          {"gpu_compared", comparison.gpu_compared},
          {"cells", std::move(cells)}};
}

}  // namespace ferry::bench
