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

// "lower by 12.0%" for a rate ratio of 0.88, "higher by 5.0%" for 1.05.
std::string rate_change(double ratio) {
  return fmt::format("{} by {:.1f}%", ratio >= 1 ? "higher" : "lower", 100 * std::abs(ratio - 1));
}

bool differs(cell_change v) { return v == cell_change::better || v == cell_change::worse; }

// Where the hosts ran at different speeds in the two cells, the difference may be the host's.
// Where end to end moved and the GPU's time did not, it is the host's: every probe is named, so
// the reader sees which moved (or that none did).
std::string host_text(const cell_comparison& c) {
  if (c.verdict == cell_change::same) return "";
  std::string text;
  const auto add = [&text](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
  if (c.gpu && !differs(c.gpu->verdict)) {
    // Every probe, moved or not: one that stayed put clears its part of the host.
    const auto steady = [](double ratio) { return std::abs(ratio - 1) < 0.005; };
    if (c.host_copy_ratio > 0)
      add("host memory bandwidth " + (steady(c.host_copy_ratio) ? "unchanged" : rate_change(c.host_copy_ratio)));
    if (c.host_ratio > 0) add("host CPU " + (steady(c.host_ratio) ? "unchanged" : time_change(c.host_ratio)));
    if (c.cuda_ratio > 0) add("CUDA calls " + (steady(c.cuda_ratio) ? "unchanged" : time_change(c.cuda_ratio)));
    if (text.empty()) return " (GPU unchanged: the host's; neither report has host probes)";
    return " (GPU unchanged: the host's; in B: " + text + ")";
  }
  if (c.host_copy_ratio > 0 && std::abs(c.host_copy_ratio - 1) > 0.10)
    add("host memory bandwidth " + rate_change(c.host_copy_ratio));
  if (c.host_ratio > 0 && std::abs(c.host_ratio - 1) > 0.10) add("host CPU " + time_change(c.host_ratio));
  if (c.cuda_ratio > 0 && std::abs(c.cuda_ratio - 1) > 0.25) add("CUDA calls " + time_change(c.cuda_ratio));
  return text.empty() ? "" : " (in B: " + text + ")";
}

// The GPU figure's verdict in words, a time either way.
std::string gpu_text(const figure_comparison& g) {
  if (g.verdict == cell_change::same) return fmt::format("same within noise ({:+.1f}%)", 100 * g.change);
  return "B " + time_change(1 + g.change);
}

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
  // The figures' unit is in their headers ("A median µs", "A req/s", "A GPU µs"): a cell reads
  // "400.0 ±1.0%".
  const std::string head_a = "A " + comparison.metric;
  const std::string head_b = "B " + comparison.metric;
  const std::size_t figure_width = std::max<std::size_t>(14, cells::display_width(head_a));
  const std::size_t gpu_width = 14;
  const std::size_t moved_width = 10;
  out += fmt::format("{}  {}  {}  {:>9}  {}  {}  {:>9}  {}  {}\n", pad("cell", width), pad(head_a, figure_width, true),
                     pad(head_b, figure_width, true), "threshold", pad("A GPU µs", gpu_width, true),
                     pad("B GPU µs", gpu_width, true), "threshold", pad("moved", moved_width), "verdict");
  bool estimated = false;
  std::size_t without_gpu = 0;
  std::size_t host_part = 0;  // cells whose GPU figure the host takes part in
  std::size_t moved_end_to_end = 0, moved_gpu = 0, moved_both = 0;
  const auto figure = [&](double v, double noise, std::size_t w) {
    return pad(fmt::format("{} ±{:.1f}%", cells::format_us(v), 100 * noise), w, true);
  };
  for (const auto& c : comparison.cells) {
    if (c.verdict == cell_change::only_in_a || c.verdict == cell_change::only_in_b ||
        c.verdict == cell_change::not_measured) {
      out += fmt::format("{}  {}  {}  {:>9}  {}  {}  {:>9}  {}  {}\n", pad(c.label, width),
                         pad("-", figure_width, true), pad("-", figure_width, true), "-", pad("-", gpu_width, true),
                         pad("-", gpu_width, true), "-", pad("-", moved_width), verdict_text(c, throughput));
      continue;
    }
    estimated = estimated || c.noise_estimated;
    const std::string_view moved = c.moved();
    moved_end_to_end += moved == "end-to-end" ? 1 : 0;
    moved_gpu += moved == "gpu" ? 1 : 0;
    moved_both += moved == "both" ? 1 : 0;
    std::string gpu_a = pad("-", gpu_width, true), gpu_b = gpu_a, gpu_threshold = "-";
    std::string gpu_verdict = "; GPU unknown";
    if (c.gpu) {
      gpu_a = figure(c.gpu->a, c.gpu->noise_a, gpu_width);
      gpu_b = figure(c.gpu->b, c.gpu->noise_b, gpu_width);
      gpu_threshold = fmt::format("{:.1f}%", 100 * c.gpu->threshold);
      gpu_verdict = "; GPU " + gpu_text(*c.gpu);
    } else {
      ++without_gpu;
    }
    host_part += c.gpu_host_part.empty() ? 0 : 1;
    out += fmt::format("{}  {}  {}  {:>8.1f}%  {}  {}  {:>9}  {}  {}{}{}{}{}{}\n", pad(c.label, width),
                       figure(c.a, c.noise_a, figure_width), figure(c.b, c.noise_b, figure_width), 100 * c.threshold,
                       gpu_a, gpu_b, gpu_threshold, pad(std::string(moved), moved_width), verdict_text(c, throughput),
                       host_text(c), gpu_verdict, c.between_trials || (c.gpu && c.gpu->between_trials) ? " t" : "",
                       c.gpu_host_part.empty() ? "" : " h", c.noise_estimated ? " *" : "");
  }
  out += fmt::format("\n{} of {} cells differ beyond their noise ({} measured in both).\n", comparison.differing,
                     comparison.cells.size(), comparison.compared);
  out += fmt::format("On the GPU's own time: {} of {} cells with a GPU figure in both differ beyond their noise.\n",
                     comparison.gpu_differing, comparison.gpu_compared);
  out +=
      fmt::format("Moved: end to end only {}, on the GPU only {}, both {}.\n", moved_end_to_end, moved_gpu, moved_both);
  if (without_gpu > 0)
    out += fmt::format(
        "{} cell{} measured in both {} no GPU figure in A or B (a report older than the figure): judged end to end "
        "only.\n",
        without_gpu, without_gpu == 1 ? "" : "s", without_gpu == 1 ? "has" : "have");
  out += fmt::format(
      "±: each figure's noise, the larger of its noise within and between its trials. threshold: the change a "
      "difference must exceed, Student's t at {:g}% one-sided times the two noises combined (t from the trials' "
      "count where their spread is the larger noise, marked t). End to end: {}, input written -> output readable; "
      "GPU: the GPU's time per request from CUDA events (copies in, engine, copies out), which the host's writes, "
      "reads and wake-ups do not move (except where marked h).\n",
      100 * difference_confidence, throughput ? "requests per second" : "the median latency");
  if (host_part > 0)
    out += fmt::format(
        "h: the host takes part in this cell's GPU figure too ({} cell{}): pageable and staged copies and managed "
        "pages are partly the CPU's work inside the span, and a span under {:g} of the host's CUDA-call probes is "
        "mostly its launches; its GPU verdict moves with the host (--json: gpu_host_part says how).\n",
        host_part, host_part == 1 ? "" : "s", launch_bound_gpu_span);
  if (estimated) out += "* noise estimated from the spread: that report has no noise figures\n";
  return out;
}

}  // namespace ferry::bench
