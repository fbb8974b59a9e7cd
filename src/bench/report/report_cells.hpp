// The human-readable cells shared by the terminal table and the markdown table, so both show
// the same columns with the same units and rounding. Private to src/bench.
//
// A report renders as two tables over the same rows: what a request costs (latency, its noise,
// throughput, the recipe and the floor measured beside it, the check) and where the time goes
// (host enqueue, the device stages, bus rates, fill, unified-memory traffic).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/bench/result.hpp"

namespace ferry::bench::cells {

enum class alignment { left, right };

struct column {
  std::string_view title;
  alignment align;
};

struct table_layout {
  std::string_view title;
  std::span<const column> columns;
  // One cell per column. For a refused result only the identity cells are produced; the caller
  // shows the reason instead of the rest.
  std::vector<std::string> (*cells)(const strategy_result&, const machine_info&);
};

// The tables, in display order.
[[nodiscard]] std::span<const table_layout> tables() noexcept;

// Number of leading columns that identify a result (engine, input, strategy) in every table.
inline constexpr std::size_t identity_columns = 3;

// "512 B", "600 KB", "19 MB", "1.5 GB": binary multiples (1 KB = 1024 B), as tensor sizes are
// A size as ferry writes every size (format_byte_size: decimal units, as --size reads them).
[[nodiscard]] std::string human_bytes(std::size_t bytes);

// Microseconds with precision that shrinks as the value grows: "4.25", "42.5", "4250".
[[nodiscard]] std::string format_us(double microseconds);

// "engine / input / strategy", naming a result in notes under a table.
[[nodiscard]] std::string result_label(const result_identity& result);

// The strategy and, when not the defaults, its run settings: "pinned [inflight 2, graph]",
// "pinned [inflight 4, clients 8, 2 GPUs]".
[[nodiscard]] std::string strategy_cell(const result_identity& result);

// Display width of UTF-8 text in terminal columns: one per code point (ferry's tables only use
// narrow characters such as µ, ±, ✓ and ✗).
[[nodiscard]] std::size_t display_width(std::string_view utf8) noexcept;

// A strategy is within this much of its recipe, or the report says by how much it is not.
inline constexpr double recipe_tolerance = 0.05;

// Footer lines shared by both renderings, plain text, one per line; all_notes() is all of them
// in this order: how many cells failed; noisy cells with their noise; strategies more than
// recipe_tolerance slower than their recipe; failed output checks (strategy or recipe);
// launch-bound engines; cells whose GPU clocks changed; cells run while the host's CPU or CUDA
// driver was slower or faster than in the run's typical cell; how each cell group's trials ran
// (schedule); each result's own notes; the distinct notes on missing recipes and UM counters.
[[nodiscard]] std::vector<std::string> all_notes(const bench_report& report);
[[nodiscard]] std::vector<std::string> failure_notes(const bench_report& report);
[[nodiscard]] std::vector<std::string> noisy_notes(const bench_report& report);
[[nodiscard]] std::vector<std::string> recipe_gap_notes(const bench_report& report);
[[nodiscard]] std::vector<std::string> check_failure_notes(const bench_report& report);
[[nodiscard]] std::vector<std::string> launch_bound_notes(const bench_report& report);
[[nodiscard]] std::vector<std::string> clock_notes(const bench_report& report);
[[nodiscard]] std::vector<std::string> host_speed_notes(const bench_report& report);
[[nodiscard]] std::vector<std::string> schedule_notes(const bench_report& report);
[[nodiscard]] std::vector<std::string> result_notes(const bench_report& report);
[[nodiscard]] std::vector<std::string> recipe_notes(const bench_report& report);
[[nodiscard]] std::vector<std::string> um_notes(const bench_report& report);

// One line per advice check ("reduce 586 KB: the profile picks mapped, 28.2 µs; best measured
// mapped, 28.2 µs: +0.0% (their noise allows 1.9%) ✓"), then summarize_advice's line; empty
// without checks.
[[nodiscard]] std::vector<std::string> advice_lines(const bench_report& report);

// "winner (latency): pinned", or "" when the report names no winner.
[[nodiscard]] std::string winner_line(const bench_report& report);

// Marks a noisy median in both tables; explained by the first noisy note.
inline constexpr std::string_view noisy_mark = "~";
// Marks a gap to the recipe beyond recipe_tolerance; explained by the recipe notes.
inline constexpr std::string_view gap_mark = "!";

}  // namespace ferry::bench::cells
