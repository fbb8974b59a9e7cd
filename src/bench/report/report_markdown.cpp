// The markdown rendering: a document for a pull request or a wiki page, with the same columns
// as the terminal table (report_cells) under a header that says when, how and where it ran.
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (moved here in newer fmt)

#include <cctype>
#include <string>
#include <vector>

#include "bench/report/report_cells.hpp"
#include "ferry/bench/report.hpp"

namespace ferry::bench {

namespace {

// A table cell must stay on one line and must not end the cell early.
std::string escape_cell(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// Inline code that survives backticks inside it (CommonMark: a longer fence, padded by spaces).
std::string inline_code(const std::string& text) {
  if (text.find('`') == std::string::npos) return "`" + text + "`";
  return "`` " + text + " ``";
}

// CUDA encodes versions as 1000 * major + 10 * minor (13000 -> "13.0").
std::string cuda_version(int encoded) {
  if (encoded < 1000) return std::to_string(encoded);
  return fmt::format("{}.{}", encoded / 1000, (encoded % 1000) / 10);
}

std::string machine_summary(const machine_info& m) {
  std::string text = m.gpu_name.empty() ? "unknown GPU" : m.gpu_name;
  std::vector<std::string> details;
  if (!m.platform.empty()) details.push_back(m.platform);
  if (!m.pcie.empty()) details.push_back("PCIe " + m.pcie);
  if (!details.empty()) text += fmt::format(" ({})", fmt::join(details, ", "));
  if (m.driver_version > 0) text += ", CUDA driver " + cuda_version(m.driver_version);
  if (m.runtime_version > 0) text += ", runtime " + cuda_version(m.runtime_version);
  return text;
}

std::string table_row(const std::vector<std::string>& cells) {
  std::string row = "|";
  for (const std::string& cell : cells) {
    row += ' ';
    row += escape_cell(cell);
    row += " |";
  }
  return row + "\n";
}

// When, how and where it ran, as a list under the title.
std::string run_header(const bench_report& report) {
  std::string out;
  if (!report.date.empty()) out += fmt::format("- **date:** {}\n", report.date);
  if (!report.command.empty()) out += fmt::format("- **command:** {}\n", inline_code(report.command));
  out += fmt::format("- **machine:** {}\n", machine_summary(report.machine));
  const machine_info& m = report.machine;
  if (m.link_peak_h2d_gbps > 0 || m.link_peak_d2h_gbps > 0) {
    out += fmt::format("- **measured link peak (pinned):** {:.1f} GB/s H2D, {:.1f} GB/s D2H\n", m.link_peak_h2d_gbps,
                       m.link_peak_d2h_gbps);
  }
  if (!report.objective.empty()) out += fmt::format("- **objective:** {}\n", report.objective);
  return out;
}

// One table under its title (capitalised), a row per measured result.
std::string table_section(const cells::table_layout& table, const std::vector<const strategy_result*>& measured,
                          const machine_info& machine) {
  std::string out = fmt::format("\n### {}{}\n\n", char(std::toupper(table.title.front())), table.title.substr(1));
  std::vector<std::string> titles;
  std::vector<std::string> rules;
  for (const cells::column& c : table.columns) {
    titles.emplace_back(c.title);
    rules.emplace_back(c.align == cells::alignment::right ? "---:" : ":---");
  }
  out += table_row(titles);
  out += fmt::format("|{}|\n", fmt::join(rules, "|"));
  for (const strategy_result* r : measured) out += table_row(table.cells(*r, machine));
  return out;
}

std::string results_section(const bench_report& report, const std::vector<const strategy_result*>& measured) {
  std::string out = "\n## Results\n";
  if (measured.empty()) return out + "\nNo strategy produced a measurement.\n";
  for (const cells::table_layout& table : cells::tables()) out += table_section(table, measured, report.machine);
  return out;
}

// The failed results' list (failures = true) or the refused ones', each with its reason; nothing
// where there are none.
std::string not_measured_section(const std::vector<const strategy_result*>& not_measured, bool failures) {
  std::string out;
  for (const strategy_result* r : not_measured) {
    if (r->verdict.failed() != failures) continue;
    if (out.empty()) out += failures ? "\n## Failed\n\n" : "\n## Refused\n\n";
    out += fmt::format("- **{}**: {}\n", cells::result_label(r->identity), r->verdict.reason());
  }
  return out;
}

std::string advice_section(const bench_report& report) {
  const auto advice = cells::advice_lines(report);
  if (advice.empty()) return "";
  // The last line is the summary; the others are one per cell group.
  std::string out = "\n## The profile's advice against this run\n\n";
  out += advice.back() + ".\n\n";
  for (std::size_t i = 0; i + 1 < advice.size(); ++i) out += "- " + advice[i] + "\n";
  return out;
}

std::string recommendation_section(const bench_report& report) {
  if (report.winner.empty() && report.recommendation.empty()) return "";
  std::string out = "\n## Recommendation\n\n";
  if (!report.winner.empty()) {
    out += report.objective.empty() ? fmt::format("Winner: **{}**\n\n", report.winner)
                                    : fmt::format("Winner for {}: **{}**\n\n", report.objective, report.winner);
  }
  if (!report.recommendation.empty()) out += report.recommendation + "\n";
  return out;
}

}  // namespace

std::string render_markdown(const bench_report& report) {
  std::string out = "# ferry bench report\n\n" + run_header(report);

  // Refused and failed results get their own lists: a reason does not fit a grid of numbers.
  std::vector<const strategy_result*> refused;
  std::vector<const strategy_result*> measured;
  for (const strategy_result& r : report.results) (r.verdict.measured() ? measured : refused).push_back(&r);
  out += results_section(report, measured);

  const std::vector<std::string> notes = cells::all_notes(report);
  if (!notes.empty()) out += "\n";
  for (const std::string& note : notes) out += fmt::format("- {}\n", note);

  // Failures first: they are errors of this run (the exit code says so), refusals are the platform's.
  out += not_measured_section(refused, true) + not_measured_section(refused, false);
  out += advice_section(report) + recommendation_section(report);
  if (!report.device_fault.empty())
    out += "\n## The GPU faulted\n\nThe run stopped: " + report.device_fault + ". The cells after it did not run.\n";
  return out;
}

}  // namespace ferry::bench
