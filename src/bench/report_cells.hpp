// The human-readable cells shared by the terminal table and the markdown table, so both show
// the same columns with the same units and rounding. Private to src/bench.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/bench_result.hpp"

namespace ferry::bench::cells {

enum class alignment { left, right };

struct column {
  std::string_view title;
  alignment align;
};

// The columns of one result row, in display order.
[[nodiscard]] std::span<const column> result_columns() noexcept;

// Number of leading columns that identify a result (engine, input, strategy); a refused row
// shows these and then its reason.
inline constexpr std::size_t identity_columns = 3;

// One cell per result_columns() entry. For a refused result only the identity cells are
// meaningful; the caller shows the reason instead of the rest.
[[nodiscard]] std::vector<std::string> result_cells(const strategy_result& result,
                                                    const machine_info& machine);

// "512 B", "600 KB", "19 MB", "1.5 GB": binary multiples (1 KB = 1024 B), as tensor sizes are
// usually chosen, labelled KB/MB/GB as DESIGN.md does. Trailing zeros are dropped.
[[nodiscard]] std::string human_bytes(std::size_t bytes);

// Microseconds with precision that shrinks as the value grows: "4.25", "42.5", "4250".
[[nodiscard]] std::string format_us(double microseconds);

// "engine / input / strategy", naming a result in notes under a table.
[[nodiscard]] std::string result_label(const strategy_result& result);

// The strategy and, when not the defaults, its run settings: "pinned [inflight 2, graph]",
// "pinned [inflight 4, clients 8, 2 GPUs]".
[[nodiscard]] std::string strategy_cell(const strategy_result& result);

// Display width of UTF-8 text in terminal columns: one per code point (ferry's tables only use
// narrow characters such as µ, ✓ and ✗).
[[nodiscard]] std::size_t display_width(std::string_view utf8) noexcept;

// Footer lines shared by both renderings: noisy rows with their relative IQR, failed output
// checks with their detail, each result's own notes (fallbacks, caveats), the distinct notes on
// missing UM counters. Plain text, one per line; all_notes() is all of them in that order.
[[nodiscard]] std::vector<std::string> all_notes(const bench_report& report);
[[nodiscard]] std::vector<std::string> noisy_notes(const bench_report& report);
[[nodiscard]] std::vector<std::string> result_notes(const bench_report& report);
[[nodiscard]] std::vector<std::string> check_failure_notes(const bench_report& report);
[[nodiscard]] std::vector<std::string> um_notes(const bench_report& report);

// "winner (latency): pinned", or "" when the report names no winner.
[[nodiscard]] std::string winner_line(const bench_report& report);

// Marks a noisy median in both tables; explained by the first noisy note.
inline constexpr std::string_view noisy_mark = "~";

}  // namespace ferry::bench::cells
