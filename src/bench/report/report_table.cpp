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

// A line of the text: its trailing spaces (a left-aligned last column's padding) are cut.
void append_line(std::string& out, std::string line) {
  line.erase(line.find_last_not_of(' ') + 1);
  out += line;
  out += '\n';
}

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

// One table's rows, each with the result it shows. Refused and failed rows appear once, in the
// first table, with their reason.
struct table_rows {
  std::vector<std::vector<std::string>> cells;
  std::vector<const strategy_result*> sources;
};

table_rows rows_of(const cells::table_layout& table, const bench_report& report, bool first_table) {
  table_rows rows;
  for (const strategy_result& r : report.results) {
    if (!r.verdict.measured() && !first_table) continue;
    rows.cells.push_back(table.cells(r, report.machine));
    rows.sources.push_back(&r);
  }
  return rows;
}

// Refused rows only have identity cells, so they only widen those columns; their reason runs
// on past the grid instead of stretching a numeric column.
std::vector<std::size_t> column_widths(const cells::table_layout& table, const table_rows& rows) {
  std::vector<std::size_t> widths;
  for (const cells::column& c : table.columns) widths.push_back(cells::display_width(c.title));
  for (const auto& row : rows.cells)
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], cells::display_width(row[i]));
  return widths;
}

// The cells of a row (or the titles), each padded to its column, the columns a gap apart.
std::string grid_line(const std::vector<std::string>& row, const std::vector<std::size_t>& widths,
                      const cells::table_layout& table) {
  std::string line;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (i > 0) line += gap;
    line += pad(row[i], widths[i], table.columns[i].align);
  }
  return line;
}

// Past the grid, why a result has no figures.
std::string reason_of(const strategy_result& r) {
  if (r.verdict.measured()) return {};
  return fmt::format("{}{}: {}", gap, r.verdict.failed() ? "failed" : "refused", r.verdict.reason());
}

void append_table(std::string& out, const cells::table_layout& table, const bench_report& report, bool first_table) {
  const table_rows rows = rows_of(table, report, first_table);
  const std::vector<std::size_t> widths = column_widths(table, rows);
  std::vector<std::string> titles;
  for (const cells::column& c : table.columns) titles.emplace_back(c.title);
  std::size_t total_width = 0;
  for (const std::size_t w : widths) total_width += w;
  total_width += gap.size() * (widths.empty() ? 0 : widths.size() - 1);

  out += '\n';
  append_line(out, std::string(table.title) + ":");
  append_line(out, grid_line(titles, widths, table));
  append_line(out, std::string(total_width, '-'));
  for (std::size_t r = 0; r < rows.cells.size(); ++r)
    append_line(out, grid_line(rows.cells[r], widths, table) + reason_of(*rows.sources[r]));
}

// The notes, the profile's advice, then the winner, the recommendation and a GPU fault.
void append_footer(std::string& out, const bench_report& report) {
  const std::vector<std::string> notes = cells::all_notes(report);
  if (!notes.empty()) out += '\n';
  for (const std::string& note : notes) append_line(out, note);

  const std::vector<std::string> advice = cells::advice_lines(report);
  if (!advice.empty()) out += '\n';
  for (const std::string& line : advice) append_line(out, "advice: " + line);

  const std::string winner = cells::winner_line(report);
  if (!winner.empty() || !report.recommendation.empty()) out += '\n';
  if (!winner.empty()) append_line(out, winner);
  if (!report.recommendation.empty()) append_line(out, "recommendation: " + report.recommendation);
  if (!report.device_fault.empty()) append_line(out, "\nthe GPU faulted, and the run stopped: " + report.device_fault);
}

}  // namespace

std::string render_table(const bench_report& report) {
  std::string out;
  if (const std::string machine = machine_line(report.machine); !machine.empty()) out += machine + "\n";
  bool first_table = true;
  for (const cells::table_layout& table : cells::tables()) {
    append_table(out, table, report, first_table);
    first_table = false;
  }
  append_footer(out, report);
  return out;
}

}  // namespace ferry::bench
