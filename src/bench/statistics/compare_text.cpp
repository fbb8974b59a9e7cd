// `ferry bench compare`'s text: a table of both reports' figures cell by cell, with each
// verdict in words, then what the figures, thresholds and marks mean.
#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "bench/report/report_cells.hpp"
#include "ferry/bench/compare.hpp"
#include "ferry/bench/stats.hpp"

namespace ferry::bench {
namespace {

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

// Better or worse: beyond the noise (compare.cpp's judgement of the same name).
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

// The table's column widths: the label's fits the longest label, the end-to-end figures' their
// header ("A median µs", "A req/s"); the GPU figures' and "moved"'s are fixed.
struct columns {
  bool throughput = false;  // the end-to-end figure is a rate (req/s), not a latency
  std::string head_a;
  std::string head_b;
  std::size_t label = 4;
  std::size_t figure = 14;
  std::size_t gpu = 14;
  std::size_t moved = 10;
};

columns columns_of(const report_comparison& comparison) {
  columns widths;
  widths.throughput = comparison.metric == "req/s";
  // The figures' unit is in their headers ("A median µs", "A req/s", "A GPU µs"): a cell reads
  // "400.0 ±1.0%".
  widths.head_a = "A " + comparison.metric;
  widths.head_b = "B " + comparison.metric;
  for (const auto& c : comparison.cells) widths.label = std::max(widths.label, cells::display_width(c.label));
  widths.figure = std::max<std::size_t>(14, cells::display_width(widths.head_a));
  return widths;
}

// Padded to `width` terminal columns, on the left or (right = true) on the right.
std::string pad(const std::string& text, std::size_t width, bool right = false) {
  const std::size_t used = cells::display_width(text);
  const std::string fill(width > used ? width - used : 0, ' ');
  return right ? fill + text : text + fill;
}

// A figure with its noise, right-aligned: "400.0 ±1.0%".
std::string figure_cell(double value, double noise, std::size_t width) {
  return pad(fmt::format("{} ±{:.1f}%", cells::format_us(value), 100 * noise), width, true);
}

std::string header_row(const columns& w) {
  return fmt::format("{}  {}  {}  {:>9}  {}  {}  {:>9}  {}  {}\n", pad("cell", w.label), pad(w.head_a, w.figure, true),
                     pad(w.head_b, w.figure, true), "threshold", pad("A GPU µs", w.gpu, true),
                     pad("B GPU µs", w.gpu, true), "threshold", pad("moved", w.moved), "verdict");
}

bool measured_in_both(const cell_comparison& c) {
  return c.verdict != cell_change::only_in_a && c.verdict != cell_change::only_in_b &&
         c.verdict != cell_change::not_measured;
}

// A cell missing from a report, or not measured in one: dashes, and why.
std::string absent_row(const cell_comparison& c, const columns& w) {
  return fmt::format("{}  {}  {}  {:>9}  {}  {}  {:>9}  {}  {}\n", pad(c.label, w.label), pad("-", w.figure, true),
                     pad("-", w.figure, true), "-", pad("-", w.gpu, true), pad("-", w.gpu, true), "-",
                     pad("-", w.moved), verdict_text(c, w.throughput));
}

// The GPU figure's columns and its verdict after the end-to-end one; dashes and "GPU unknown"
// where a report lacks the figure.
struct gpu_columns {
  std::string a;
  std::string b;
  std::string threshold = "-";
  std::string verdict = "; GPU unknown";
};

gpu_columns gpu_columns_of(const cell_comparison& c, const columns& w) {
  gpu_columns out{.a = pad("-", w.gpu, true), .b = pad("-", w.gpu, true)};
  if (!c.gpu) return out;
  out.a = figure_cell(c.gpu->a, c.gpu->noise_a, w.gpu);
  out.b = figure_cell(c.gpu->b, c.gpu->noise_b, w.gpu);
  out.threshold = fmt::format("{:.1f}%", 100 * c.gpu->threshold);
  out.verdict = "; GPU " + gpu_text(*c.gpu);
  return out;
}

// The marks the legend under the table explains: t (a threshold from the trials' count), h (the
// host takes part in the GPU figure), * (noise estimated from the spread).
std::string marks(const cell_comparison& c) {
  std::string out = c.between_trials || (c.gpu && c.gpu->between_trials) ? " t" : "";
  if (!c.gpu_host_part.empty()) out += " h";
  if (c.noise_estimated) out += " *";
  return out;
}

std::string measured_row(const cell_comparison& c, const columns& w) {
  const gpu_columns gpu = gpu_columns_of(c, w);
  return fmt::format("{}  {}  {}  {:>8.1f}%  {}  {}  {:>9}  {}  {}{}{}{}\n", pad(c.label, w.label),
                     figure_cell(c.a, c.noise_a, w.figure), figure_cell(c.b, c.noise_b, w.figure), 100 * c.threshold,
                     gpu.a, gpu.b, gpu.threshold, pad(std::string(c.moved()), w.moved), verdict_text(c, w.throughput),
                     host_text(c), gpu.verdict, marks(c));
}

// What the lines under the table count, over the cells measured in both.
struct tally {
  bool estimated = false;
  std::size_t without_gpu = 0;
  std::size_t host_part = 0;  // cells whose GPU figure the host takes part in
  std::size_t moved_end_to_end = 0;
  std::size_t moved_gpu = 0;
  std::size_t moved_both = 0;

  void count(const cell_comparison& c) {
    estimated = estimated || c.noise_estimated;
    const std::string_view moved = c.moved();
    moved_end_to_end += moved == "end-to-end" ? 1 : 0;
    moved_gpu += moved == "gpu" ? 1 : 0;
    moved_both += moved == "both" ? 1 : 0;
    without_gpu += c.gpu ? 0 : 1;
    host_part += c.gpu_host_part.empty() ? 0 : 1;
  }
};

// How many cells differ on each figure, and which moved.
std::string counts(const report_comparison& comparison, const tally& t) {
  std::string out = fmt::format("\n{} of {} cells differ beyond their noise ({} measured in both).\n",
                                comparison.differing, comparison.cells.size(), comparison.compared);
  out += fmt::format("On the GPU's own time: {} of {} cells with a GPU figure in both differ beyond their noise.\n",
                     comparison.gpu_differing, comparison.gpu_compared);
  out += fmt::format("Moved: end to end only {}, on the GPU only {}, both {}.\n", t.moved_end_to_end, t.moved_gpu,
                     t.moved_both);
  if (t.without_gpu > 0)
    out += fmt::format(
        "{} cell{} measured in both {} no GPU figure in A or B (a report older than the figure): judged end to end "
        "only.\n",
        t.without_gpu, t.without_gpu == 1 ? "" : "s", t.without_gpu == 1 ? "has" : "have");
  return out;
}

// What ±, the threshold and the two figures mean, then the marks the table used.
std::string legend(const tally& t, bool throughput) {
  std::string out = fmt::format(
      "±: each figure's noise, the larger of its noise within and between its trials. threshold: the change a "
      "difference must exceed, Student's t at {:g}% one-sided times the two noises combined (t from the trials' "
      "count where their spread is the larger noise, marked t). End to end: {}, input written -> output readable; "
      "GPU: the GPU's time per request from CUDA events (copies in, engine, copies out), which the host's writes, "
      "reads and wake-ups do not move (except where marked h).\n",
      100 * difference_confidence, throughput ? "requests per second" : "the median latency");
  if (t.host_part > 0)
    out += fmt::format(
        "h: the host takes part in this cell's GPU figure too ({} cell{}): pageable and staged copies and managed "
        "pages are partly the CPU's work inside the span, and a span under {:g} of the host's CUDA-call probes is "
        "mostly its launches; its GPU verdict moves with the host (--json: gpu_host_part says how).\n",
        t.host_part, t.host_part == 1 ? "" : "s", launch_bound_gpu_span);
  if (t.estimated) out += "* noise estimated from the spread: that report has no noise figures\n";
  return out;
}

}  // namespace

std::string render_comparison(const report_comparison& comparison, const std::string& name_a,
                              const std::string& name_b) {
  const columns widths = columns_of(comparison);
  std::string out = fmt::format("A: {}\nB: {}\n\n", name_a, name_b) + header_row(widths);
  tally t;
  for (const auto& c : comparison.cells) {
    if (!measured_in_both(c)) {
      out += absent_row(c, widths);
      continue;
    }
    t.count(c);
    out += measured_row(c, widths);
  }
  return out + counts(comparison, t) + legend(t, widths.throughput);
}

}  // namespace ferry::bench
