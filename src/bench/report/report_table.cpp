// The terminal rendering: an aligned table, then the notes, the winner and the recommendation.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bench/report/report_cells.hpp"
#include "ferry/bench/report.hpp"

namespace ferry::bench {

namespace {

constexpr std::string_view gap = "  ";

std::string pad(const std::string& text, std::size_t width, cells::alignment align) {
  const std::size_t used = cells::display_width(text);
  const std::string fill(width > used ? width - used : 0, ' ');
  return align == cells::alignment::left ? text + fill : fill + text;
}

void strip_trailing_spaces(std::string& line) { line.erase(line.find_last_not_of(' ') + 1); }

std::string machine_line(const machine_info& m) {
  if (m.gpu_name.empty()) return {};
  std::string line = m.gpu_name;
  if (!m.platform.empty()) line += ", " + m.platform;
  if (!m.pcie.empty()) line += ", PCIe " + m.pcie;
  if (m.link_peak_h2d_gbps > 0 || m.link_peak_d2h_gbps > 0) {
    line += fmt::format("; measured link peak {:.1f} GB/s H2D, {:.1f} GB/s D2H", m.link_peak_h2d_gbps,
                        m.link_peak_d2h_gbps);
  }
  return line;
}

}  // namespace

std::string render_table(const bench_report& report) {
  std::string out;
  if (const std::string machine = machine_line(report.machine); !machine.empty()) out += machine + "\n";

  const auto append_line = [&out](std::string line) {
    strip_trailing_spaces(line);
    out += line;
    out += '\n';
  };

  bool first_table = true;
  for (const cells::table_layout& table : cells::tables()) {
    // Refused and failed rows appear once, in the first table, with their reason.
    std::vector<std::vector<std::string>> rows;
    std::vector<const strategy_result*> sources;
    for (const strategy_result& r : report.results) {
      if (!r.verdict.measured() && !first_table) continue;
      rows.push_back(table.cells(r, report.machine));
      sources.push_back(&r);
    }
    // Refused rows only have identity cells, so they only widen those columns; their reason runs
    // on past the grid instead of stretching a numeric column.
    std::vector<std::size_t> widths;
    for (const cells::column& c : table.columns) widths.push_back(cells::display_width(c.title));
    for (const auto& row : rows)
      for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], cells::display_width(row[i]));

    out += '\n';
    append_line(std::string(table.title) + ":");
    std::string header;
    std::size_t total_width = 0;
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      if (i > 0) header += gap;
      header += pad(std::string(table.columns[i].title), widths[i], table.columns[i].align);
      total_width += widths[i] + (i > 0 ? gap.size() : 0);
    }
    append_line(header);
    append_line(std::string(total_width, '-'));
    for (std::size_t r = 0; r < rows.size(); ++r) {
      std::string line;
      for (std::size_t i = 0; i < rows[r].size(); ++i) {
        if (i > 0) line += gap;
        line += pad(rows[r][i], widths[i], table.columns[i].align);
      }
      if (!sources[r]->verdict.measured())
        line += fmt::format("{}{}: {}", gap, sources[r]->verdict.failed() ? "failed" : "refused",
                            sources[r]->verdict.reason());
      append_line(line);
    }
    first_table = false;
  }

  const std::vector<std::string> notes = cells::all_notes(report);
  if (!notes.empty()) out += '\n';
  for (const std::string& note : notes) append_line(note);

  const std::vector<std::string> advice = cells::advice_lines(report);
  if (!advice.empty()) out += '\n';
  for (const std::string& line : advice) append_line("advice: " + line);

  const std::string winner = cells::winner_line(report);
  if (!winner.empty() || !report.recommendation.empty()) out += '\n';
  if (!winner.empty()) append_line(winner);
  if (!report.recommendation.empty()) append_line("recommendation: " + report.recommendation);
  if (!report.device_fault.empty()) append_line("\nthe GPU faulted, and the run stopped: " + report.device_fault);
  return out;
}

}  // namespace ferry::bench
