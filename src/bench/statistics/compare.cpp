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

std::string verdict_text(const cell_comparison& c) {
  switch (c.verdict) {
    case cell_change::same:
      return "same within noise";
    case cell_change::better:
      return "B better";
    case cell_change::worse:
      return "B worse";
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
  if (c.host_ratio > 0 && std::abs(c.host_ratio - 1) > 0.10)
    text += fmt::format("host CPU {:.2f}x as slow in B", c.host_ratio);
  if (c.cuda_ratio > 0 && std::abs(c.cuda_ratio - 1) > 0.25)
    text += fmt::format("{}CUDA calls {:.2f}x as slow in B", text.empty() ? "" : ", ", c.cuda_ratio);
  return text.empty() ? "" : " (" + text + ")";
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
  return {{"metric", comparison.metric}, {"differing", comparison.differing}, {"cells", std::move(cells)}};
}

std::string render_comparison(const report_comparison& comparison, const std::string& name_a,
                              const std::string& name_b) {
  std::string out = fmt::format("A: {}\nB: {}\n\n", name_a, name_b);
  std::size_t width = 4;
  for (const auto& c : comparison.cells) width = std::max(width, cells::display_width(c.label));
  const auto pad = [](std::string text, std::size_t w) {
    const std::size_t used = cells::display_width(text);
    return text + std::string(w > used ? w - used : 0, ' ');
  };
  out +=
      fmt::format("{}  {:>14}  {:>14}  {:>8}  {:>8}  {}\n", pad("cell", width), "A", "B", "change", "noise", "verdict");
  bool estimated = false;
  for (const auto& c : comparison.cells) {
    if (c.verdict == cell_change::only_in_a || c.verdict == cell_change::only_in_b ||
        c.verdict == cell_change::not_measured) {
      out += fmt::format("{}  {:>14}  {:>14}  {:>8}  {:>8}  {}\n", pad(c.label, width), "-", "-", "-", "-",
                         verdict_text(c));
      continue;
    }
    estimated = estimated || c.noise_estimated;
    const auto figure = [&](double v, double noise) {
      return fmt::format("{} ±{:.1f}%", cells::format_us(v), 100 * noise);
    };
    out += fmt::format("{}  {:>14}  {:>14}  {:>+7.1f}%  {:>7.1f}%  {}{}{}\n", pad(c.label, width),
                       figure(c.a, c.noise_a), figure(c.b, c.noise_b), 100 * c.change, 100 * c.threshold,
                       verdict_text(c) + host_text(c), c.between_trials ? " t" : "", c.noise_estimated ? " *" : "");
  }
  out += fmt::format(
      "\n{} of {} cells differ beyond their noise ({}; each figure's noise is the larger of its noise "
      "within and between its trials; 'noise' is the change a difference must exceed: Student's t at "
      "{:g}% one-sided times the two noises combined, t from the trials' count where their spread is "
      "the larger noise, marked t)\n",
      comparison.differing, comparison.cells.size(), comparison.metric, 100 * difference_confidence);
  if (estimated) out += "* noise estimated from the spread: that report has no noise figures\n";
  return out;
}

}  // namespace ferry::bench
