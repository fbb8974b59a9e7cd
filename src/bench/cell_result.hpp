// Turns what a cell's loops recorded into the plain data of its report row. Private to src/bench.
#pragma once

#include "bench/cell_samples.hpp"
#include "ferry/bench/result.hpp"
#include "ferry/bench/run.hpp"

namespace ferry::bench {

// Fills the statistics of `r` from the strategy's samples; `wall_seconds` is the loop's own time.
// With `paired`, throughput is the series' own rate (its requests alternated with others').
void assemble_result(cell_samples& s, double wall_seconds, bool paired, const run_options& options,
                     const stopping_criterion& stop, strategy_result& r);

// A recipe's or the floor's samples as a side run.
[[nodiscard]] side_run assemble_side_run(cell_samples& s, std::string_view steps);

// How much the host probe may move during a cell (p75 over p25) before the cell is flagged: the
// host's speed is then in its figures in a way a later run will not repeat.
inline constexpr double host_change_limit = 0.10;
// The CUDA probe is a few microseconds of driver calls, noisier than the integer chain.
inline constexpr double cuda_change_limit = 0.25;

// p75 / p25 - 1 of samples in any order.
[[nodiscard]] double quartile_spread(std::vector<double> samples);

// "+3.2%": how much slower `value` is than `baseline`.
[[nodiscard]] double relative_gap(double value, double baseline) noexcept;

}  // namespace ferry::bench
