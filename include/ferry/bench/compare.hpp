// Two bench reports of the same matrix, cell by cell: which cells differ beyond their noise.
//
// Each cell's figure carries its noise (the relative standard error of the median, or of the
// throughput for throughput cells). Two figures differ when their relative difference exceeds
// twice the combined noise, about a 95% test of two independent estimates: anything less is as
// likely the host's noise as a real change. Reports written before noise was recorded get it
// estimated from their spread (0.93 IQR / sqrt(n) / median, the normal approximation), and say so.
#pragma once

#include <string>
#include <vector>

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

struct cell_comparison {
  std::string label;         // "reduce / 18.1 MB / pinned"
  std::string metric;        // "median µs" or "req/s"
  double a = 0;
  double b = 0;
  double noise_a = 0;        // relative
  double noise_b = 0;
  double change = 0;         // b / a - 1
  double threshold = 0;      // |change| beyond this is a difference
  bool noise_estimated = false;  // at least one report had no noise figure for this cell
  // B's host probe over A's (1.4: the host CPU took 1.4x as long for the same work in B's cell);
  // 0 where a report has no probe. A difference with a host ratio far from 1 may be the host's.
  double host_ratio = 0;
  double cuda_ratio = 0;  // the same for the CUDA-call probe
  cell_change verdict = cell_change::same;
};

struct report_comparison {
  std::vector<cell_comparison> cells;  // A's order, then B's cells missing from A
  std::size_t differing = 0;           // better + worse
  std::string metric;                  // what was compared: "median µs" or "req/s"
};

// Matches cells by engine, input size, strategy and run settings (slots, clients, GPUs, graph,
// warm-up, input writes). Throughput cells (either report's objective "throughput") compare
// req/s, the others the median latency.
[[nodiscard]] report_comparison compare_reports(const bench_report& a, const bench_report& b);

// A table of every cell with both figures, the change and the verdict, then one summary line.
[[nodiscard]] std::string render_comparison(const report_comparison& comparison, const std::string& name_a,
                                            const std::string& name_b);

}  // namespace ferry::bench
