#include "bench/report/report_cells.hpp"

#include "bench/statistics/advice_check.hpp"
#include "ferry/bench/stats.hpp"
#include "ferry/core/byte_size.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (moved here in newer fmt)

#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>

namespace ferry::bench::cells {

namespace {

constexpr std::string_view missing = "-";

// "19.50" -> "19.5", "19.00" -> "19"; leaves integers alone.

// A median of a series, or "-" when the series is empty (nothing copied, no breakdown).
std::string median_cell(const sample_stats& stats) {
  return stats.count == 0 ? std::string(missing) : format_us(stats.median);
}

std::string rate_cell(double per_second) {
  if (!(per_second > 0)) return std::string(missing);
  if (per_second >= 1e6) return fmt::format("{:.2f}M", per_second / 1e6);
  if (per_second >= 1e4) return fmt::format("{:.1f}k", per_second / 1e3);
  if (per_second >= 100) return fmt::format("{:.0f}", per_second);
  return fmt::format("{:.1f}", per_second);
}

// Bandwidth and, where the link peak was measured, how close it comes to it: the number that
// says whether a path is already as fast as the hardware allows.
std::string bandwidth_cell(double gbps, double peak_gbps) {
  if (!(gbps > 0)) return std::string(missing);
  if (peak_gbps > 0) return fmt::format("{:.1f} ({:.0f}%)", gbps, 100.0 * gbps / peak_gbps);
  return fmt::format("{:.1f}", gbps);
}

std::string check_cell(const result_verdict& v) {
  if (!v.output_checked) return std::string(missing);
  return v.output_matches ? "✓" : "✗";
}

// A figure given a column in its field table, by its unit; "-" where it is 0 (not measured, or a
// report that predates it).
std::string figure_cell(double value, std::string_view unit) {
  if (!(value > 0)) return std::string(missing);
  if (unit == "µs") return format_us(value);
  if (unit == "fraction") return fmt::format("{:.1f}%", 100 * value);
  if (unit == "GB/s") return fmt::format("{:.2f}", value);
  return fmt::format("{:.3g}", value);
}

// Megabytes, decimal like every size ferry writes (format_byte_size), one decimal: a column of them.
std::string megabytes(std::uint64_t bytes) { return fmt::format("{:.1f}", static_cast<double>(bytes) / 1e6); }

}  // namespace

std::string human_bytes(std::size_t bytes) { return format_byte_size(bytes); }

std::string format_us(double microseconds) {
  if (std::isnan(microseconds)) return std::string(missing);
  if (std::abs(microseconds) >= 1000) return fmt::format("{:.0f}", microseconds);
  if (std::abs(microseconds) >= 10) return fmt::format("{:.1f}", microseconds);
  return fmt::format("{:.2f}", microseconds);
}

std::string strategy_cell(const result_identity& id) {
  std::vector<std::string> settings;
  if (id.inflight != 1) settings.push_back(fmt::format("inflight {}", id.inflight));
  if (id.clients != 1) settings.push_back(fmt::format("clients {}", id.clients));
  if (id.devices.size() > 1) settings.push_back(fmt::format("{} GPUs", id.devices.size()));
  if (id.graph) settings.emplace_back("graph");
  if (!id.warmed_up) settings.emplace_back("no warm-up");
  if (id.input_writes == "cached") settings.emplace_back("cached writes");
  if (settings.empty()) return std::string(strategy_name(id.strategy));
  return fmt::format("{} [{}]", strategy_name(id.strategy), fmt::join(settings, ", "));
}

namespace {
// The first request and where it falls among the timed ones: "1050 (p63)" reads as a typical
// request; "20834 (p100)" as one slower than every timed request, a cold start.
std::string first_request_cell(const result_figures& f) {
  if (f.cold_first_us <= 0) return std::string(missing);
  if (f.latency_us.count == 0) return format_us(f.cold_first_us);
  return fmt::format("{} (p{:.0f})", format_us(f.cold_first_us), f.cold_first_percentile);
}
}  // namespace

std::string result_label(const result_identity& id) {
  return fmt::format("{} / {} / {}", id.engine, human_bytes(id.input_bytes), strategy_cell(id));
}

namespace {

std::vector<std::string> identity_cells(const result_identity& id) {
  return {id.engine, human_bytes(id.input_bytes), strategy_cell(id)};
}

std::string percent_cell(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

std::string signed_percent(double fraction) { return fmt::format("{:+.1f}%", 100 * fraction); }

// "+3.1% / +4.0%": how much slower than its recipe at the median and at p90; "!" past tolerance.
std::string recipe_gap_cell(const result_figures& f, const std::optional<side_run>& recipe) {
  if (!recipe || recipe->latency_us.count == 0) return std::string(missing);
  const double median = f.latency_us.median / recipe->latency_us.median - 1;
  const double p90 = f.latency_us.p90 / recipe->latency_us.p90 - 1;
  const bool over = median > recipe_tolerance || p90 > recipe_tolerance;
  return fmt::format("{} / {}{}", signed_percent(median), signed_percent(p90), over ? gap_mark : "");
}

std::string side_median_cell(const std::optional<side_run>& run) {
  return run ? median_cell(run->latency_us) : std::string(missing);
}

// The noise between trials and how many there were: "0.8% (3)"; "-" for one trial (no spread).
std::string trial_noise_cell(const result_figures& f, bool throughput) {
  if (f.trials.size() < 2) return std::string(missing);
  return fmt::format("{} ({})", percent_cell(throughput ? f.throughput_trial_noise : f.trial_noise), f.trials.size());
}

std::vector<std::string> request_cells(const strategy_result& r, const machine_info&) {
  std::vector<std::string> cells = identity_cells(r.identity);
  if (!r.verdict.measured()) return cells;
  cells.push_back(median_cell(r.figures.latency_us) + (r.verdict.noisy ? std::string(noisy_mark) : ""));
  // Reports written before noise was recorded have no limit either: no figure, not 0%.
  cells.push_back(r.figures.latency_us.count == 0 || r.verdict.max_noise == 0 ? std::string(missing)
                                                                              : percent_cell(r.figures.noise));
  cells.push_back(trial_noise_cell(r.figures, false));
  // The latency figures with a column in sample_stats' field table (p90, p99, ...).
  for_each_field<sample_stats>([&](const auto& f) {
    if (!f.shown(shown_in::columns)) return;
    const double value = r.figures.latency_us.*(f.member);
    // A figure a report predates reads as 0: no figure, not a latency of nothing.
    cells.push_back(r.figures.latency_us.count == 0 || !(value > 0) ? std::string(missing) : format_us(value));
  });
  cells.push_back(rate_cell(r.figures.throughput_per_s));
  cells.push_back(side_median_cell(r.diagnostics.recipe));
  cells.push_back(recipe_gap_cell(r.figures, r.diagnostics.recipe));
  cells.push_back(side_median_cell(r.diagnostics.floor));
  cells.push_back(check_cell(r.verdict));
  cells.push_back(first_request_cell(r.figures));
  return cells;
}

std::vector<std::string> stage_cells(const strategy_result& r, const machine_info& machine) {
  std::vector<std::string> cells = identity_cells(r.identity);
  if (!r.verdict.measured()) return cells;
  cells.push_back(median_cell(r.figures.enqueue_us));
  cells.push_back(median_cell(r.figures.h2d_us));
  cells.push_back(median_cell(r.figures.compute_us));
  cells.push_back(median_cell(r.figures.d2h_us));
  cells.push_back(bandwidth_cell(r.figures.h2d_gbps, machine.link_peak_h2d_gbps));
  cells.push_back(bandwidth_cell(r.figures.d2h_gbps, machine.link_peak_d2h_gbps));
  cells.push_back(median_cell(r.figures.fill_us));
  if (r.diagnostics.um) {
    cells.push_back(fmt::format("{}/{}", r.diagnostics.um->gpu_page_faults, r.diagnostics.um->cpu_page_faults));
    cells.push_back(fmt::format("{}/{}", megabytes(r.diagnostics.um->bytes_host_to_device),
                                megabytes(r.diagnostics.um->bytes_device_to_host)));
  } else {
    cells.emplace_back(missing);
    cells.emplace_back(missing);
  }
  // The figures given a column title in result_figures' table, after the stages.
  for_each_field<result_figures>([&](const auto& f) {
    if constexpr (std::is_arithmetic_v<field_value_t<decltype(f)>>) {
      if (f.shown(shown_in::columns)) cells.push_back(figure_cell(static_cast<double>(value_of(f, r)), f.unit));
    }
  });
  return cells;
}

std::vector<column> make_request_columns() {
  std::vector<column> columns{
      {"engine", alignment::left},     {"input", alignment::right}, {"strategy", alignment::left},
      {"median µs", alignment::right}, {"±", alignment::right},     {"± trials", alignment::right},
  };
  for_each_field<sample_stats>([&](const auto& f) {
    if (f.shown(shown_in::columns)) columns.push_back({f.column, alignment::right});
  });
  for (const column c : {column{"loop req/s", alignment::right}, column{"recipe µs", alignment::right},
                         column{"vs recipe (p50/p90)", alignment::right}, column{"floor µs", alignment::right},
                         column{"check", alignment::left}, column{"first µs (rank)", alignment::right}})
    columns.push_back(c);
  return columns;
}
const std::vector<column> request_columns = make_request_columns();

std::vector<column> make_stage_columns() {
  std::vector<column> columns{
      column{"engine", alignment::left},         column{"input", alignment::right},
      column{"strategy", alignment::left},       column{"enqueue µs", alignment::right},
      column{"h2d µs", alignment::right},        column{"compute µs", alignment::right},
      column{"d2h µs", alignment::right},        column{"H2D GB/s", alignment::right},
      column{"D2H GB/s", alignment::right},      column{"fill µs", alignment::right},
      column{"UM faults g/c", alignment::right}, column{"UM MB in/out", alignment::right},
  };
  for_each_field<result_figures>([&](const auto& f) {
    if constexpr (std::is_arithmetic_v<field_value_t<decltype(f)>>) {
      if (f.shown(shown_in::columns)) columns.push_back({f.column, alignment::right});
    }
  });
  return columns;
}
const std::vector<column> stage_columns = make_stage_columns();

const std::array layouts{
    table_layout{"requests", request_columns, request_cells},
    table_layout{"where the time goes", stage_columns, stage_cells},
};

}  // namespace

std::span<const table_layout> tables() noexcept { return layouts; }

std::size_t display_width(std::string_view utf8) noexcept {
  // Count every byte that does not continue a multi-byte sequence (continuations are 10xxxxxx).
  return static_cast<std::size_t>(
      std::count_if(utf8.begin(), utf8.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::vector<std::string> noisy_notes(const bench_report& report) {
  std::vector<std::string> notes;
  for (const strategy_result& r : report.results) {
    if (!r.verdict.measured() || !r.verdict.noisy) continue;
    notes.push_back(fmt::format(
        "{} noisy: {}: {}; a difference from another run smaller than about twice the larger "
        "noise is not a difference",
        noisy_mark, result_label(r.identity), r.verdict.stopped.empty() ? "noise above the limit" : r.verdict.stopped));
  }
  return notes;
}

std::vector<std::string> recipe_gap_notes(const bench_report& report) {
  std::vector<std::string> notes;
  for (const strategy_result& r : report.results) {
    if (!r.verdict.measured() || !r.diagnostics.recipe || r.diagnostics.recipe->latency_us.count == 0) continue;
    const double median = r.figures.latency_us.median / r.diagnostics.recipe->latency_us.median - 1;
    const double p90 = r.figures.latency_us.p90 / r.diagnostics.recipe->latency_us.p90 - 1;
    if (median <= recipe_tolerance && p90 <= recipe_tolerance) continue;
    notes.push_back(
        fmt::format("{} recipe gap: {}: {:.1f}% slower than its recipe at the median, {:.1f}% at p90 "
                    "(noise ±{:.1f}% / ±{:.1f}%; recipe: {})",
                    gap_mark, result_label(r.identity), 100 * median, 100 * p90, 100 * r.figures.noise,
                    100 * r.diagnostics.recipe->noise, r.diagnostics.recipe->steps));
  }
  return notes;
}

std::vector<std::string> check_failure_notes(const bench_report& report) {
  std::vector<std::string> notes;
  for (const strategy_result& r : report.results) {
    if (!r.verdict.measured()) continue;
    if (r.verdict.output_checked && !r.verdict.output_matches)
      notes.push_back(fmt::format("✗ {}: output differs from the device-resident reference: {}",
                                  result_label(r.identity),
                                  r.verdict.check_detail.empty() ? "no detail" : r.verdict.check_detail));
    for (const auto* side : {&r.diagnostics.recipe, &r.diagnostics.floor}) {
      if (*side && (*side)->output_checked && !(*side)->output_matches)
        notes.push_back(fmt::format("✗ {}: the {}'s output differs from the device-resident reference: {}",
                                    result_label(r.identity), side == &r.diagnostics.recipe ? "recipe" : "floor",
                                    (*side)->check_detail));
    }
  }
  return notes;
}

std::vector<std::string> launch_bound_notes(const bench_report& report) {
  std::vector<std::string> notes;
  for (const strategy_result& r : report.results) {
    if (!r.verdict.measured() || r.figures.enqueue_us.count == 0 || r.figures.compute_us.count == 0 ||
        r.figures.compute_us.median < 20)
      continue;
    // The engine's kernels were enqueued about as slowly as the GPU ran them: the GPU waited on
    // the CPU, whose speed (and any drift of it) is then in every figure of the cell.
    if (r.figures.enqueue_us.median < 0.8 * r.figures.compute_us.median) continue;
    notes.push_back(fmt::format(
        "launch-bound: {}: the CPU took {} µs to enqueue work the GPU ran in {} µs; the host "
        "CPU's speed is in every figure of this cell (a CUDA graph, --graph, removes it where "
        "the engine can be captured)",
        result_label(r.identity), format_us(r.figures.enqueue_us.median), format_us(r.figures.compute_us.median)));
  }
  return notes;
}

std::vector<std::string> clock_notes(const bench_report& report) {
  std::vector<std::string> notes;
  for (const strategy_result& r : report.results) {
    if (!r.verdict.measured() || !r.diagnostics.clocks || !r.diagnostics.clocks->changed) continue;
    const clock_record& c = *r.diagnostics.clocks;
    std::string text =
        fmt::format("clocks: {}: SM {}-{} MHz, memory {}-{} MHz over {} samples", result_label(r.identity),
                    c.sm_mhz_min, c.sm_mhz_max, c.mem_mhz_min, c.mem_mhz_max, c.samples);
    if (!c.throttle_reasons.empty()) text += fmt::format("; throttled: {}", fmt::join(c.throttle_reasons, ", "));
    notes.push_back(text);
  }
  return notes;
}

std::vector<std::string> host_speed_notes(const bench_report& report) {
  std::vector<std::string> notes;
  // The yardstick is the run's typical cell (the median over its cells); with fewer than three
  // cells, the probes taken when the run started.
  std::vector<double> host, cuda;
  for (const strategy_result& r : report.results) {
    if (!r.verdict.measured()) continue;
    if (r.diagnostics.host_probe_us > 0) host.push_back(r.diagnostics.host_probe_us);
    if (r.diagnostics.cuda_probe_us > 0) cuda.push_back(r.diagnostics.cuda_probe_us);
  }
  const double host_typical = host.size() >= 3 ? median_of(host) : report.machine.host_probe_us;
  const double cuda_typical = cuda.size() >= 3 ? median_of(cuda) : report.machine.cuda_probe_us;
  for (const strategy_result& r : report.results) {
    if (!r.verdict.measured()) continue;
    std::vector<std::string> changes;
    if (host_typical > 0 && r.diagnostics.host_probe_us > 0 &&
        std::abs(r.diagnostics.host_probe_us / host_typical - 1) > 0.10)
      changes.push_back(fmt::format("the CPU took {:.2f}x as long for the same work ({:.1f} vs {:.1f} µs)",
                                    r.diagnostics.host_probe_us / host_typical, r.diagnostics.host_probe_us,
                                    host_typical));
    if (cuda_typical > 0 && r.diagnostics.cuda_probe_us > 0 &&
        std::abs(r.diagnostics.cuda_probe_us / cuda_typical - 1) > 0.25)
      changes.push_back(fmt::format("the CUDA driver's calls took {:.2f}x as long ({:.1f} vs {:.1f} µs)",
                                    r.diagnostics.cuda_probe_us / cuda_typical, r.diagnostics.cuda_probe_us,
                                    cuda_typical));
    if (changes.empty()) continue;
    notes.push_back(
        fmt::format("host: {}: against the run's typical cell, {}: CPU-bound figures of this cell (small "
                    "requests, pageable and staged copies, launch-bound engines) will not repeat at "
                    "another speed",
                    result_label(r.identity), fmt::join(changes, " and ")));
  }
  return notes;
}

std::vector<std::string> failure_notes(const bench_report& report) {
  std::vector<std::string> notes;
  std::size_t failed = 0;
  for (const strategy_result& r : report.results) failed += r.verdict.failed() ? 1 : 0;
  if (failed > 0)
    notes.push_back(fmt::format("failed: {} of {} cells failed, each with its reason; the run went on without them",
                                failed, report.results.size()));
  return notes;
}

std::vector<std::string> schedule_notes(const bench_report& report) {
  // One line per cell group (an engine at a size), in the order of the report.
  struct group {
    std::string engine;
    std::size_t input_bytes;
    std::string schedule;
    std::size_t cells = 0, fewest = 0, most = 0;
    double first = 0, last = 0;
    bool timed = false;
  };
  std::vector<group> groups;
  for (const strategy_result& r : report.results) {
    if (!r.verdict.measured() || r.identity.schedule.empty()) continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const group& g) {
      return g.engine == r.identity.engine && g.input_bytes == r.identity.input_bytes;
    });
    if (it == groups.end()) {
      groups.push_back({.engine = r.identity.engine,
                        .input_bytes = r.identity.input_bytes,
                        .schedule = r.identity.schedule,
                        .fewest = r.figures.trials.size(),
                        .most = r.figures.trials.size()});
      it = groups.end() - 1;
    }
    group& g = *it;
    ++g.cells;
    if (g.schedule != r.identity.schedule) g.schedule = "mixed";
    g.fewest = std::min(g.fewest, r.figures.trials.size());
    g.most = std::max(g.most, r.figures.trials.size());
    for (const trial_figures& t : r.figures.trials) {
      g.first = g.timed ? std::min(g.first, t.started_seconds) : t.started_seconds;
      g.last = g.timed ? std::max(g.last, t.started_seconds) : t.started_seconds;
      g.timed = true;
    }
  }
  std::vector<std::string> notes;
  for (const group& g : groups) {
    const std::string how = g.schedule == "interleaved"
                                ? "interleaved: trials in rounds with the run's other cells, in a changing order"
                            : g.schedule == "sequential" ? "sequential: each cell's trials back to back"
                                                         : g.schedule;
    const std::string trials =
        g.fewest == g.most ? fmt::format("{}", g.fewest) : fmt::format("{}-{}", g.fewest, g.most);
    notes.push_back(fmt::format("schedule: {} {}: {} cell{} {}; {} trial{} each{}", g.engine,
                                human_bytes(g.input_bytes), g.cells, g.cells == 1 ? "" : "s", how, trials,
                                g.most == 1 ? "" : "s",
                                g.timed ? fmt::format(", started {:.1f}-{:.1f} s into the run", g.first, g.last) : ""));
  }
  return notes;
}

std::vector<std::string> result_notes(const bench_report& report) {
  std::vector<std::string> notes;
  for (const strategy_result& r : report.results) {
    for (const std::string& note : r.diagnostics.notes)
      notes.push_back(fmt::format("note: {}: {}", result_label(r.identity), note));
  }
  return notes;
}

namespace {
// The distinct texts of one kind of note over all results: one line each, not one per cell.
template <class Pick>
std::vector<std::string> distinct_notes(const bench_report& report, std::string_view prefix, Pick pick) {
  std::vector<std::string> notes;
  for (const strategy_result& r : report.results) {
    const std::string text = pick(r.diagnostics);
    if (!r.verdict.measured() || text.empty()) continue;
    const std::string note = std::string(prefix) + text;
    if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
  }
  return notes;
}
}  // namespace

std::vector<std::string> recipe_notes(const bench_report& report) {
  return distinct_notes(
      report, "recipes: ", [](const result_diagnostics& d) { return d.recipe ? std::string() : d.recipe_note; });
}

std::vector<std::string> um_notes(const bench_report& report) {
  return distinct_notes(report,
                        "UM counters: ", [](const result_diagnostics& d) { return d.um ? std::string() : d.um_note; });
}

// What the request table's rate counts: not 1 / median (the latency column says that), but what
// the client loop achieved, filling each request's input included.
std::vector<std::string> column_notes(const bench_report& report) {
  if (report.results.empty()) return {};
  return {
      "loop req/s: requests the cell's clients completed per second, each request's input fill included "
      "(the throughput a throughput cell is judged by); the latency columns time the request alone"};
}

std::vector<std::string> all_notes(const bench_report& report) {
  std::vector<std::string> notes;
  for (auto* source :
       {&column_notes, &failure_notes, &noisy_notes, &recipe_gap_notes, &check_failure_notes, &launch_bound_notes,
        &clock_notes, &host_speed_notes, &schedule_notes, &result_notes, &recipe_notes, &um_notes}) {
    const auto more = source(report);
    notes.insert(notes.end(), more.begin(), more.end());
  }
  return notes;
}

std::vector<std::string> advice_lines(const bench_report& report) {
  std::vector<std::string> lines;
  if (report.advice_checks.empty()) return lines;
  const bool latency = report.objective != "throughput";
  const auto figure = [latency](double value) {
    return latency ? format_us(value) + " µs" : rate_cell(value) + " req/s";
  };
  for (const advice_check& c : report.advice_checks) {
    std::string line = fmt::format("{} {}: the profile picks {}", c.engine, human_bytes(c.input_bytes), c.picked);
    if (c.shortfall) line += ", " + figure(c.picked_value);
    if (!c.best.empty()) line += fmt::format("; best measured {}, {}", c.best, figure(c.best_value));
    const std::string noise = c.noise > 0 ? fmt::format(" (their noise allows {})", percent_cell(c.noise)) : "";
    line += c.shortfall ? fmt::format(": {}{} {}", signed_percent(*c.shortfall), noise, c.within() ? "✓" : "✗")
                        : ": " + c.note;
    lines.push_back(std::move(line));
  }
  lines.push_back(summarize_advice(report.advice_checks));
  return lines;
}

std::string winner_line(const bench_report& report) {
  if (report.winner.empty()) return {};
  if (report.objective.empty()) return "winner: " + report.winner;
  return fmt::format("winner ({}): {}", report.objective, report.winner);
}

}  // namespace ferry::bench::cells
