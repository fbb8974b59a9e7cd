// `ferry bench`'s sweep as a library: a request (engines x sizes x strategies and how to run them)
// is checked, planned into workloads, run cell by cell and gathered into one bench_report. The
// CLI only parses flags into a matrix_request and run_options and prints what comes back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/bench/placement_cost.hpp"
#include "ferry/bench/result.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/engines/model_engine.hpp"
#include "ferry/memory/profile.hpp"
#include "ferry/memory/strategy.hpp"
#include "ferry/session/choose.hpp"

namespace ferry::bench {

// --strategy, parsed once at the edge: the strategies to measure, or auto (one per cell group,
// picked as matrix_request says).
struct strategy_selection {
  bool automatic = false;
  std::vector<strategy_kind> kinds{all_strategies.begin(), all_strategies.end()};  // empty when automatic
};

// "auto", "all" or a comma-separated list; throws invalid_argument naming an unknown strategy.
[[nodiscard]] strategy_selection parse_strategy_selection(std::string_view text);

struct matrix_request {
  std::vector<std::string> engines{"reduce", "touch"};
  std::vector<std::string> sizes{"0.6MB", "19MB"};  // built-ins sized by bytes
  std::int64_t batch = 16;                          // mlp, images, model files
  std::vector<std::string> shapes;                  // "NAME:D1xD2..."
  std::string preprocess;                           // "" or "u8-normalize"
  strategy_selection strategies;                    // every strategy by default
  // "auto" with this GPU's profile: ferry::choose picks from it; without one, auto calibrates on
  // the workload and `profile_note` (why there is none) goes into the cell's notes. With several
  // strategies and a profile, each cell group records what the profile would have picked against
  // the best measured (bench_report::advice_checks).
  std::optional<device_profile> profile;
  std::string profile_note;
  objective goal = objective::latency;
  bool measure_link = true;  // the pinned link peak, for % of peak
  // Where model files' backends are looked for; empty: ferry::backend_directories().
  std::vector<std::filesystem::path> backend_directories;
  // Bounds of model files' integer inputs their files do not give (--index-bound INPUT=N).
  std::vector<index_bound_override> index_bounds;
};

// Checks what can be checked without a GPU (sizes, shapes), so a typo is named
// before anything touches the device. Throws invalid_argument naming the bad value.
void validate(const matrix_request& request);

// Called before each cell with "reduce 19MB pinned" (a progress line).
using progress_function = std::function<void(const std::string&)>;

// Runs every cell and decides the winner. `command_line` is recorded in the report. Every group's
// workload (a model file loads) and every cell are made first; then the cells' trials run in
// rounds (options.schedule). Only bad input throws (before any cell runs); a cell that fails, out
// of memory or otherwise, is a row with its reason and `failed` set, and the run goes on.
[[nodiscard]] bench_report run_matrix(const matrix_request& request, const run_options& options,
                                      const std::string& command_line, const progress_function& progress = {});

// The cells of a report that failed (an error, not a refusal of the platform): a run with any
// ends with a non-zero exit code.
[[nodiscard]] std::size_t count_failed(const bench_report& report);

// The machine a report was measured on: the first GPU of `devices` (several are named), its
// platform, link, driver and runtime, and with `measure_link` the pinned link peak.
[[nodiscard]] machine_info describe_machine(const std::vector<int>& devices, bool measure_link);

// Now, as ISO 8601 in UTC ("2026-11-30T15:36:16Z"), as reports record their date.
[[nodiscard]] std::string utc_timestamp();

// `--placement`: every engine and size with its data on each GPU of `devices`, run on each.
[[nodiscard]] std::vector<placement_cost> run_placement_matrix(const matrix_request& request,
                                                               const std::vector<int>& devices, int iterations,
                                                               const progress_function& progress = {});

}  // namespace ferry::bench
