// Renderings of a bench_report: JSON (the machine-readable form plots and tools read back),
// a terminal table, markdown and CSV. All of them are views of the same plain data
// (ferry/bench/result.hpp, walked through its field tables); none of them computes a number the
// report does not already carry, except the percentage of the measured link peak.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>

#include "ferry/bench/result.hpp"

namespace ferry::bench {

// Identifies the JSON layout; bumped when a field changes meaning or is removed (adding a field
// does not bump it: readers fill missing fields with their defaults).
inline constexpr int report_schema_version = 1;

// Every field of the report, under the keys of ferry/bench/result.hpp's field tables. Optional
// fields are null when absent ("refused", "um").
[[nodiscard]] nlohmann::json to_json(const bench_report& report);

// Reads what to_json wrote; to_json(report_from_json(to_json(r))) == to_json(r). Missing fields
// take their defaults (reports from older versions still load); a field of the wrong type, or a
// newer schema version, throws ferry::invalid_argument naming the problem.
[[nodiscard]] bench_report report_from_json(const nlohmann::json& json);

// A compact aligned table for the terminal: one row per result, refused rows with their reason,
// noisy rows marked, then the winner and the recommendation. UTF-8 (µ, ✓, ✗).
[[nodiscard]] std::string render_table(const bench_report& report);

// A markdown document: header (date, command, machine), a GitHub table with the columns of the
// terminal table, the refusals, the winner and the recommendation.
[[nodiscard]] std::string render_markdown(const bench_report& report);

// CSV with RFC 4180 quoting and LF line ends: one header row, then one row per result with every
// field in its own column (every sample_stats member of every series as <series>_<member>, raw
// numbers in their base units, empty cells for absent optionals).
[[nodiscard]] std::string render_csv(const bench_report& report);

}  // namespace ferry::bench
