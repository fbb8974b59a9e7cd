#include "bench/report_cells.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (moved here in newer fmt)

#include <algorithm>
#include <array>
#include <cmath>

namespace ferry::bench::cells {

namespace {

constexpr std::array columns{
    column{"engine", alignment::left},
    column{"input", alignment::right},
    column{"strategy", alignment::left},
    column{"median µs", alignment::right},
    column{"p99 µs", alignment::right},
    column{"req/s", alignment::right},
    column{"h2d µs", alignment::right},
    column{"compute µs", alignment::right},
    column{"d2h µs", alignment::right},
    column{"H2D GB/s", alignment::right},
    column{"D2H GB/s", alignment::right},
    column{"first µs (rank)", alignment::right},
    column{"check", alignment::left},
    column{"UM faults g/c", alignment::right},
    column{"UM MB in/out", alignment::right},
};

constexpr std::string_view missing = "-";

// "19.50" -> "19.5", "19.00" -> "19"; leaves integers alone.
std::string trim_zeros(std::string text) {
  if (text.find('.') == std::string::npos) return text;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

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

std::string check_cell(const strategy_result& r) {
  if (!r.output_checked) return std::string(missing);
  return r.output_matches ? "✓" : "✗";
}

std::string mebibytes(std::uint64_t bytes) {
  return fmt::format("{:.1f}", static_cast<double>(bytes) / static_cast<double>(1 << 20));
}

}  // namespace

std::span<const column> result_columns() noexcept { return columns; }

std::string human_bytes(std::size_t bytes) {
  constexpr std::array<std::string_view, 4> units{"KB", "MB", "GB", "TB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes) / 1024;
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < units.size()) {
    value /= 1024;
    ++unit;
  }
  const char* pattern = value >= 100 ? "{:.0f}" : value >= 10 ? "{:.1f}" : "{:.2f}";
  return fmt::format("{} {}", trim_zeros(fmt::format(fmt::runtime(pattern), value)), units[unit]);
}

std::string format_us(double microseconds) {
  if (std::isnan(microseconds)) return std::string(missing);
  if (std::abs(microseconds) >= 1000) return fmt::format("{:.0f}", microseconds);
  if (std::abs(microseconds) >= 10) return fmt::format("{:.1f}", microseconds);
  return fmt::format("{:.2f}", microseconds);
}

std::string strategy_cell(const strategy_result& r) {
  std::vector<std::string> settings;
  if (r.inflight != 1) settings.push_back(fmt::format("inflight {}", r.inflight));
  if (r.clients != 1) settings.push_back(fmt::format("clients {}", r.clients));
  if (r.devices.size() > 1) settings.push_back(fmt::format("{} GPUs", r.devices.size()));
  if (r.graph) settings.emplace_back("graph");
  if (!r.warmed_up) settings.emplace_back("no warm-up");
  if (r.input_writes == "cached") settings.emplace_back("cached writes");
  if (settings.empty()) return r.strategy;
  return fmt::format("{} [{}]", r.strategy, fmt::join(settings, ", "));
}

namespace {
// The first request and where it falls among the timed ones: "1050 (p63)" reads as a typical
// request; "20834 (p100)" as one slower than every timed request, a cold start.
std::string first_request_cell(const strategy_result& r) {
  if (r.cold_first_us <= 0) return std::string(missing);
  if (r.latency_us.count == 0) return format_us(r.cold_first_us);
  return fmt::format("{} (p{:.0f})", format_us(r.cold_first_us), r.cold_first_percentile);
}
}  // namespace

std::string result_label(const strategy_result& r) {
  return fmt::format("{} / {} / {}", r.engine, human_bytes(r.input_bytes), strategy_cell(r));
}

std::vector<std::string> result_cells(const strategy_result& r, const machine_info& machine) {
  std::vector<std::string> cells{r.engine, human_bytes(r.input_bytes), strategy_cell(r)};
  if (r.refused) return cells;

  const std::string noisy_suffix = r.noisy ? std::string(noisy_mark) : "";
  cells.push_back(median_cell(r.latency_us) + noisy_suffix);
  cells.push_back(r.latency_us.count == 0 ? std::string(missing) : format_us(r.latency_us.p99));
  cells.push_back(rate_cell(r.throughput_per_s));
  cells.push_back(median_cell(r.h2d_us));
  cells.push_back(median_cell(r.compute_us));
  cells.push_back(median_cell(r.d2h_us));
  cells.push_back(bandwidth_cell(r.h2d_gbps, machine.link_peak_h2d_gbps));
  cells.push_back(bandwidth_cell(r.d2h_gbps, machine.link_peak_d2h_gbps));
  cells.push_back(first_request_cell(r));
  cells.push_back(check_cell(r));
  if (r.um) {
    cells.push_back(fmt::format("{}/{}", r.um->gpu_page_faults, r.um->cpu_page_faults));
    cells.push_back(fmt::format("{}/{}", mebibytes(r.um->bytes_host_to_device),
                                mebibytes(r.um->bytes_device_to_host)));
  } else {
    cells.emplace_back(missing);
    cells.emplace_back(missing);
  }
  return cells;
}

std::size_t display_width(std::string_view utf8) noexcept {
  // Count every byte that does not continue a multi-byte sequence (continuations are 10xxxxxx).
  return static_cast<std::size_t>(std::count_if(utf8.begin(), utf8.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::vector<std::string> noisy_notes(const bench_report& report) {
  std::vector<std::string> notes;
  for (const strategy_result& r : report.results) {
    if (r.refused || !r.noisy) continue;
    notes.push_back(fmt::format(
        "{} noisy: {}: the median had not settled when sampling stopped at its cap ({} iterations, "
        "{:.1f} s; IQR {:.1f}% of the median)",
        noisy_mark, result_label(r), r.iterations, r.wall_seconds, 100.0 * r.relative_iqr));
  }
  return notes;
}

std::vector<std::string> check_failure_notes(const bench_report& report) {
  std::vector<std::string> notes;
  for (const strategy_result& r : report.results) {
    if (r.refused || !r.output_checked || r.output_matches) continue;
    notes.push_back(fmt::format("✗ {}: output differs from the device-resident reference: {}",
                                result_label(r), r.check_detail.empty() ? "no detail" : r.check_detail));
  }
  return notes;
}

std::vector<std::string> result_notes(const bench_report& report) {
  std::vector<std::string> notes;
  for (const strategy_result& r : report.results) {
    for (const std::string& note : r.notes) notes.push_back(fmt::format("note: {}: {}", result_label(r), note));
  }
  return notes;
}

std::vector<std::string> um_notes(const bench_report& report) {
  std::vector<std::string> notes;
  for (const strategy_result& r : report.results) {
    if (r.refused || r.um || r.um_note.empty()) continue;
    const std::string note = "UM counters: " + r.um_note;
    if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
  }
  return notes;
}

std::vector<std::string> all_notes(const bench_report& report) {
  std::vector<std::string> notes;
  for (auto* source : {&noisy_notes, &check_failure_notes, &result_notes, &um_notes}) {
    const auto more = source(report);
    notes.insert(notes.end(), more.begin(), more.end());
  }
  return notes;
}

std::string winner_line(const bench_report& report) {
  if (report.winner.empty()) return {};
  if (report.objective.empty()) return "winner: " + report.winner;
  return fmt::format("winner ({}): {}", report.objective, report.winner);
}

}  // namespace ferry::bench::cells
