// Two bench reports of the same matrix, cell by cell: which cells differ beyond their noise, on
// each of two figures.
//
// End to end: the median latency (or the rate, for throughput cells), what a caller sees. On a
// shared or virtualised host it moves with the host's memory system and scheduler: on the H200
// host the end-to-end medians of host-path cells of 16 MB and up moved 5-30% between identical
// runs while the GPU's own timeline moved by about 1% (uploads 351.9-352.8 µs, downloads
// 349.5-352.6 µs). So each cell is judged on the GPU's time per request too
// (result_figures::gpu_us, from CUDA events), with its own noise: a change of ferry's or the
// platform's GPU-side work shows there whatever the host did, and a change end to end with the
// GPU unchanged is the host's (the report names its probes: memory bandwidth, CPU, CUDA calls).
//
// Each figure carries its noise: the larger of its noise within trials (the relative standard
// error of the median, or of the rate for throughput cells) and between its trials (the spread of
// the trials' figures, which sees what moves over a run's minutes). Two figures differ when their
// relative difference exceeds difference_threshold (stats.hpp): Student's t at 99% one-sided,
// with the degrees of freedom of the trials where their spread is the larger noise, times the two
// noises combined. Anything less is as likely the host's noise as a real change.
// Calibrated by A/A runs (the same binary and host twice: at most 5% of cells called different)
// and A/B runs with `--slowdown 10` (a real 10% change of both figures, to be found in at least
// 95% of the cells of 16 MB and up); docs/RESULTS.md has the rates measured. Reports written before
// noise was recorded get it estimated from their spread (0.93 IQR / sqrt(n) / median, the normal
// approximation), and say so; reports written before the GPU figure was recorded are judged end
// to end only, and say so.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ferry/bench/result.hpp"

namespace ferry::bench {

enum class cell_change {
  same,         // within noise
  better,       // B lower latency, or higher throughput, beyond noise
  worse,        // the other way
  only_in_a,    // no matching cell in B
  only_in_b,    // no matching cell in A
  not_measured  // refused (or empty) in either report
};

// One figure of a cell in both reports, judged against its noise.
struct figure_comparison {
  double a = 0;
  double b = 0;
  double noise_a = 0;  // relative: each figure's judged noise
  double noise_b = 0;
  bool between_trials = false;  // either noise is its trials' spread (the threshold uses t for their count)
  double change = 0;            // b / a - 1
  double threshold = 0;         // |change| beyond this is a difference
  // same, better or worse; a cell's (cell_comparison) is also only_in_a, only_in_b or not_measured
  cell_change verdict = cell_change::same;
};

// The figures a cell is judged on: `--on` of `ferry bench compare`.
enum class judged_figure {
  end_to_end,  // the median latency (or the rate), input written -> output readable
  gpu,         // the GPU's time per request (gpu_us); end to end where a report lacks it
  both,        // either figure
};

[[nodiscard]] std::string_view to_string(judged_figure f) noexcept;
// "end-to-end", "gpu" or "both"; nullopt for anything else.
[[nodiscard]] std::optional<judged_figure> parse_judged_figure(std::string_view text) noexcept;

// A cell of both reports: its end-to-end figure (the fields of figure_comparison: the median
// latency or the rate) and what else the judgement of it rests on.
struct cell_comparison : figure_comparison {
  std::string label;  // "reduce / 18.1 MB / pinned"
  std::size_t input_bytes = 0;
  std::string metric;            // "median µs" or "req/s"
  bool noise_estimated = false;  // at least one report had no noise figure for this cell
  // B's host probe over A's (1.4: the host CPU took 1.4x as long for the same work in B's cell);
  // 0 where a report has no probe. A difference with a host ratio far from 1 may be the host's.
  double host_ratio = 0;
  double cuda_ratio = 0;  // the same for the CUDA-call probe
  // B's host memory bandwidth over A's (0.8: B's host copied memory at 80% of A's rate); 0 where a
  // report has no memory-copy probe. Large host-path cells move with it.
  double host_copy_ratio = 0;
  // The GPU's time per request, judged with its own noise; nullopt where either report has no GPU
  // figure for the cell (written before it was recorded): gpu_note says which, and the cell is
  // judged end to end only.
  std::optional<figure_comparison> gpu;
  std::string gpu_note;
  // Where the host takes part in the GPU figure too, why: its strategy's transfer is partly the
  // CPU's work inside the span (strategy_properties::host_in_gpu_span), or the span is so short
  // that the host's launches between its events are a large part of it (under
  // launch_bound_gpu_span CUDA-call probes). Empty where the figure is the GPU's own, which the
  // host cannot move.
  std::string gpu_host_part;

  // Which figure moved beyond its noise: "end-to-end", "gpu", "both" or "neither" (also for
  // cells not measured in both).
  [[nodiscard]] std::string_view moved() const noexcept;
};

// A GPU span shorter than this many of the host's CUDA-call probes (eight event records and a
// synchronize, ~5 µs on the H200 host) is mostly the host's launches: a device-resident 16 MB
// request's 25 µs moved 6-17% between identical runs, a pinned one's 380 µs less than 1.5%.
inline constexpr double launch_bound_gpu_span = 10;

struct report_comparison {
  std::vector<cell_comparison> cells;  // A's order, then B's cells missing from A
  std::size_t differing = 0;           // better + worse
  std::string metric;                  // what was compared: "median µs" or "req/s"
  std::size_t measured_a = 0;          // cells each report measured (neither refused nor failed)
  std::size_t measured_b = 0;
  std::size_t compared = 0;       // cells measured in both: same + better + worse
  std::size_t gpu_compared = 0;   // of those, cells with a GPU figure in both
  std::size_t gpu_differing = 0;  // of those, cells whose GPU figure differs beyond its noise
};

// Matches cells by engine, input size, strategy and run settings (slots, clients, GPUs, graph,
// warm-up, input writes). Throughput cells (either report's objective "throughput") compare
// req/s, the others the median latency.
[[nodiscard]] report_comparison compare_reports(const bench_report& a, const bench_report& b);

// Why two reports come from machines that cannot be compared cell by cell: another GPU, driver,
// CUDA runtime or link (one line each, naming both); empty when they match.
[[nodiscard]] std::vector<std::string> host_differences(const machine_info& a, const machine_info& b);

// Why two reports share too few cells for their comparison to say much: no cell measured in
// both, or fewer than half of A's or of B's measured cells (another engine, other sizes,
// strategies or settings: cells match by all of them), saying what the common cells are of each
// ("all of B's 6, fewer than half of A's 80"). Empty when they share enough. A gate
// (--fail-above) on such a pair could not fail, so the CLI refuses it; without one it warns.
[[nodiscard]] std::string overlap_problem(const report_comparison& comparison);

// A cell B measured worse than A on one figure.
struct regression {
  const cell_comparison* cell = nullptr;
  std::string figure;  // "end-to-end" or "gpu"
  double change = 0;   // that figure's change, b / a - 1
};

// The cells B measured worse than A beyond their noise and by more than `percent` percent on the
// figure(s) `on` names, for `ferry bench compare --fail-above`: `both` fails on either (one entry
// per figure that did); a cell without a GPU figure is judged end to end whatever `on` says.
[[nodiscard]] std::vector<regression> regressions(const report_comparison& comparison, double percent,
                                                  judged_figure on = judged_figure::both);

// Every cell's figures, noises, change, threshold and verdict ("same", "better", "worse",
// "only in A", "only in B", "not measured") end to end (its "figure": "end-to-end"), its GPU
// figure likewise under "gpu" (with "figure": "gpu"; null, and "gpu_note" why, where a report
// lacks it), which "moved", the host probes' ratios, the counts that differ on each figure, the
// cells each report measured and those measured in both, for scripts.
[[nodiscard]] nlohmann::json to_json(const report_comparison& comparison);

// A table of every cell with both reports' figures end to end and on the GPU (the units in their
// column headers), each threshold, which moved and the verdicts ("B slower by 4.1%", "B faster by
// 5.3%", "same within noise"; the GPU's after "GPU"); where end to end moved and the GPU did not,
// the host probes' changes. Then a summary of each figure.
[[nodiscard]] std::string render_comparison(const report_comparison& comparison, const std::string& name_a,
                                            const std::string& name_b);

}  // namespace ferry::bench
