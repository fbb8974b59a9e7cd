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

cell_key key_of(const strategy_result& r) {
  return {r.engine, r.input_bytes, r.strategy, r.inflight, r.clients, r.devices, r.graph, r.warmed_up, r.input_writes};
}

bool usable(const strategy_result& r) { return !r.refused && r.iterations > 0; }

// The cell's judged noise (the larger of within and between its trials), or an estimate from
// its spread where the report predates noise figures.
noise_estimate noise_of(const strategy_result& r, bool throughput, bool& estimated) {
  const noise_estimate judged = judged_noise(r, throughput);
  if (judged.relative > 0) return judged;
  if (r.iterations < 2) return {.relative = 1.0};
  estimated = true;
  return {.relative = 0.93 * r.relative_iqr / std::sqrt(static_cast<double>(r.iterations))};
}

cell_comparison compare_cell(const strategy_result& a, const strategy_result& b, bool throughput) {
  cell_comparison c;
  c.label = cells::result_label(a);
  c.input_bytes = a.input_bytes;
  c.metric = throughput ? "req/s" : "median µs";
  if (!usable(a) || !usable(b)) {
    c.verdict = cell_change::not_measured;
    return c;
  }
  c.a = throughput ? a.throughput_per_s : a.latency_us.median;
  c.b = throughput ? b.throughput_per_s : b.latency_us.median;
  const noise_estimate na = noise_of(a, throughput, c.noise_estimated);
  const noise_estimate nb = noise_of(b, throughput, c.noise_estimated);
  c.noise_a = na.relative;
  c.noise_b = nb.relative;
  c.between_trials = !std::isinf(na.dof) || !std::isinf(nb.dof);
  c.change = c.a > 0 ? c.b / c.a - 1 : 0;
  c.threshold = difference_threshold(na, nb);
  if (a.host_probe_us > 0 && b.host_probe_us > 0) c.host_ratio = b.host_probe_us / a.host_probe_us;
  if (a.cuda_probe_us > 0 && b.cuda_probe_us > 0) c.cuda_ratio = b.cuda_probe_us / a.cuda_probe_us;
  if (std::abs(c.change) <= c.threshold) {
    c.verdict = cell_change::same;
  } else {
    const bool b_higher = c.change > 0;
    c.verdict = (b_higher == throughput) ? cell_change::better : cell_change::worse;
  }
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

// "slower by 25.0%" for a time ratio of 1.25, "faster by 20.0%" for 0.8: how long B took against A.
std::string time_change(double ratio) {
  return ratio >= 1 ? fmt::format("slower by {:.1f}%", 100 * (ratio - 1))
                    : fmt::format("faster by {:.1f}%", 100 * (1 - ratio));
}

// What B's figure says against A's in words. A latency that grew is slower; a rate that grew,
// faster (the change is then in requests per second).
std::string verdict_text(const cell_comparison& c, bool throughput) {
  switch (c.verdict) {
    case cell_change::same:
      return fmt::format("same within noise ({:+.1f}%)", 100 * c.change);
    case cell_change::better:
    case cell_change::worse:
      if (throughput)
        return fmt::format("B {} by {:.1f}%", c.change > 0 ? "faster" : "slower", 100 * std::abs(c.change));
      return "B " + time_change(1 + c.change);
    case cell_change::only_in_a:
      return "only in A";
    case cell_change::only_in_b:
      return "only in B";
    case cell_change::not_measured:
      return "not measured in both";
  }
  return "";
}

// Where the hosts ran at different speeds in the two cells, the difference may be the host's.
std::string host_text(const cell_comparison& c) {
  if (c.verdict == cell_change::same) return "";
  std::string text;
  if (c.host_ratio > 0 && std::abs(c.host_ratio - 1) > 0.10) text += "host CPU " + time_change(c.host_ratio);
  if (c.cuda_ratio > 0 && std::abs(c.cuda_ratio - 1) > 0.25)
    text += (text.empty() ? "" : ", ") + std::string("CUDA calls ") + time_change(c.cuda_ratio);
  return text.empty() ? "" : " (in B: " + text + ")";
}

}  // namespace

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
  if (comparison.compared == 0)
    return fmt::format("the reports have no measured cell in common ({}; {})", counts, match);
  if (2 * comparison.compared < comparison.measured_a || 2 * comparison.compared < comparison.measured_b)
    return fmt::format("the reports have only {} measured cell{} in common, fewer than half of either's ({}; {})",
                       comparison.compared, comparison.compared == 1 ? "" : "s", counts, match);
  return "";
}

std::vector<const cell_comparison*> regressions(const report_comparison& comparison, double percent) {
  std::vector<const cell_comparison*> worse;
  for (const auto& c : comparison.cells)
    if (c.verdict == cell_change::worse && std::abs(c.change) * 100 > percent) worse.push_back(&c);
  return worse;
}

report_comparison compare_reports(const bench_report& a, const bench_report& b) {
  const bool throughput = a.objective == "throughput" || b.objective == "throughput";
  report_comparison out;
  out.metric = throughput ? "req/s" : "median µs";
  std::vector<bool> matched(b.results.size(), false);
  for (const auto& ra : a.results) {
    const auto key = key_of(ra);
    const auto it = std::find_if(b.results.begin(), b.results.end(), [&](const auto& rb) { return key_of(rb) == key; });
    if (it == b.results.end()) {
      cell_comparison only;
      only.label = cells::result_label(ra);
      only.input_bytes = ra.input_bytes;
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
      only.label = cells::result_label(b.results[i]);
      only.input_bytes = b.results[i].input_bytes;
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
  return out;
}

nlohmann::json to_json(const report_comparison& comparison) {
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& c : comparison.cells)
    cells.push_back({{"label", c.label},
                     {"input_bytes", c.input_bytes},
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
                     {"verdict", verdict_name(c.verdict)}});
  return {{"metric", comparison.metric},         {"differing", comparison.differing},
          {"measured_a", comparison.measured_a}, {"measured_b", comparison.measured_b},
          {"compared", comparison.compared},     {"cells", std::move(cells)}};
}

std::string render_comparison(const report_comparison& comparison, const std::string& name_a,
                              const std::string& name_b) {
  const bool throughput = comparison.metric == "req/s";
  std::string out = fmt::format("A: {}\nB: {}\n\n", name_a, name_b);
  std::size_t width = 4;
  for (const auto& c : comparison.cells) width = std::max(width, cells::display_width(c.label));
  const auto pad = [](std::string text, std::size_t w, bool right = false) {
    const std::size_t used = cells::display_width(text);
    const std::string fill(w > used ? w - used : 0, ' ');
    return right ? fill + text : text + fill;
  };
  // The figures' unit is in their headers ("A median µs", "A req/s"): a cell reads "400.0 ±1.0%".
  const std::string head_a = "A " + comparison.metric;
  const std::string head_b = "B " + comparison.metric;
  const std::size_t figure_width = std::max<std::size_t>(14, cells::display_width(head_a));
  out += fmt::format("{}  {}  {}  {:>9}  {}\n", pad("cell", width), pad(head_a, figure_width, true),
                     pad(head_b, figure_width, true), "threshold", "verdict");
  bool estimated = false;
  for (const auto& c : comparison.cells) {
    if (c.verdict == cell_change::only_in_a || c.verdict == cell_change::only_in_b ||
        c.verdict == cell_change::not_measured) {
      out += fmt::format("{}  {}  {}  {:>9}  {}\n", pad(c.label, width), pad("-", figure_width, true),
                         pad("-", figure_width, true), "-", verdict_text(c, throughput));
      continue;
    }
    estimated = estimated || c.noise_estimated;
    const auto figure = [&](double v, double noise) {
      return pad(fmt::format("{} ±{:.1f}%", cells::format_us(v), 100 * noise), figure_width, true);
    };
    out += fmt::format("{}  {}  {}  {:>8.1f}%  {}{}{}{}\n", pad(c.label, width), figure(c.a, c.noise_a),
                       figure(c.b, c.noise_b), 100 * c.threshold, verdict_text(c, throughput), host_text(c),
                       c.between_trials ? " t" : "", c.noise_estimated ? " *" : "");
  }
  out += fmt::format("\n{} of {} cells differ beyond their noise ({} measured in both).\n", comparison.differing,
                     comparison.cells.size(), comparison.compared);
  out += fmt::format(
      "±: each figure's noise, the larger of its noise within and between its trials. threshold: the change a "
      "difference must exceed, Student's t at {:g}% one-sided times the two noises combined (t from the trials' "
      "count where their spread is the larger noise, marked t).\n",
      100 * difference_confidence);
  if (estimated) out += "* noise estimated from the spread: that report has no noise figures\n";
  return out;
}

}  // namespace ferry::bench
