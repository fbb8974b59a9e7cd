// `ferry bench`: runs engines under transfer strategies and measures them as docs/ARCHITECTURE.md §5 describes:
// fresh input written by the CPU and the output read by the CPU every iteration, outputs checked
// against the device-resident reference, noise-aware stopping, the cold first request apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/bench/result.hpp"
#include "ferry/bench/stopping.hpp"
#include "ferry/bench/trials.hpp"
#include "ferry/choose.hpp"
#include "ferry/engine.hpp"
#include "ferry/session.hpp"
#include "ferry/strategy.hpp"

namespace ferry::bench {

enum class objective { latency, throughput };

// How the benchmark's CPU writes each request's fresh input. A DMA or the GPU reading host memory
// right after ordinary stores runs slower (a 19 MB pinned upload: 87% of the link peak instead
// of 96%; see ferry/streaming_copy.hpp), so the way the input was written is part of what a cell
// measures. Both write the same bytes for the same seed.
enum class input_writes {
  cached,     // ordinary stores: the lines sit dirty in the CPU caches when the request starts
  streaming,  // non-temporal stores (copy_streaming): the bytes are in memory, where DMA reads fastest
};

// The name reports and --input-writes use.
[[nodiscard]] constexpr std::string_view to_string(input_writes w) noexcept {
  return w == input_writes::cached ? "cached" : "streaming";
}

// What one measured cell runs: an engine and the concrete shapes to feed it.
struct workload {
  std::string label;                      // as shown in reports ("reduce", "u8-normalize+reduce")
  // The engine for one GPU, called with that GPU current (an engine's contexts live on one
  // device, so a multi-GPU run makes one replica per GPU).
  std::function<std::unique_ptr<engine>(int device)> make_engine;
  std::vector<shape_binding> shapes;      // empty: the engine's defaults
};

struct run_options {
  // The GPUs to spread requests over: one engine replica with `session.inflight` slots on each,
  // requests to the least-loaded one (replica_set). One GPU runs exactly the single-session path.
  std::vector<int> devices{0};
  // How every cell's sessions are made; the strategy is each cell's own and is set per cell.
  session_options session{.strategy = strategy_kind::pinned, .inflight = 1};
  // Search the slot count instead (--inflight auto): raise it until throughput stops rising.
  bool inflight_auto = false;
  int clients = 1;
  bool warmup = true;
  // When the warm-up has done its job: the latency has stopped moving (see client_loop.cpp for
  // why one request is not enough). A paired cell allows max_seconds per series it runs.
  settling_rule warmup_rule{.min_iterations = 6, .max_iterations = 64, .min_seconds = 0.02, .max_seconds = 0.5,
                            .tolerance = 0.05};
  std::optional<std::size_t> iterations;  // a fixed count instead of sampling until quiet
  sampling_limits limits;                  // when a cell's median is known well enough
  // Throughput cells: requests over a window of at least this long, until the rate's noise is
  // at most limits.max_noise (or limits.max_seconds have passed), whatever the latency's noise.
  std::optional<double> window_seconds;
  std::size_t check_every = 64;           // compare outputs with the reference every N requests
  bool um_counters = true;                // CUPTI unified-memory counters for managed strategies
  // Each strategy's recipe and the floor, timed beside it where the cell runs one request at a
  // time (one client, one slot, one GPU).
  bool recipes = true;
  // Streaming by default: it models a client that follows ferry's advice and writes its inputs
  // with copy_streaming; `--input-writes cached` shows what ordinary stores cost.
  input_writes writes = input_writes::streaming;
  // How run_matrix spreads the trials of its cells (ferry/bench/trials.hpp).
  trial_schedule schedule = trial_schedule::interleaved;
  // `--inflight auto` stops before a depth whose slots would leave less than this share of the
  // card's memory free (what one slot costs is measured at the depths before).
  double memory_margin = 0.10;
  // A test hook (--slowdown): every timed request's clock stops only after this share of its
  // latency more has passed, a known change for checking `ferry bench compare` on a real run.
  double slowdown = 0;
};

// Measures one workload under one strategy, its trials back to back (limits.min_trials and more
// while noisy, each with fresh buffers). Never throws for a strategy the platform refuses, a buffer
// that cannot be made or any other error of the cell: the result carries the reason in `refused`
// (and `failed` for errors).
[[nodiscard]] strategy_result run_cell(const workload& w, strategy_kind strategy,
                                       const run_options& options);

// The most slots a cell run with `options` may hold per GPU at once: --inflight, or the deepest
// count --inflight auto may try. Model files make one runner per context that may run at once.
[[nodiscard]] int max_slots(const run_options& options) noexcept;

// `--inflight auto`: the slot count for a strategy, found by raising it (1, 2, 3, 4, 6, 8, 12,
// ...) over short throughput windows until two steps in a row no longer beat the best by more
// than their noise; the pick is the smallest count within noise of the best. It never tries a
// count whose slots would not fit: with a memory reading, it stops before a count that would need
// more than the GPU's free memory less options.memory_margin of the card, at the most one slot
// cost so far (each step's device_bytes_used over its slots).
struct inflight_choice {
  std::optional<int> depth;              // nullopt: not even one slot ran (steps say why)
  std::vector<strategy_result> steps;    // one per count tried, in order
  std::string explanation;               // "inflight auto: 4 slots (req/s at 1: 790, ...)"
};
using cell_function = std::function<strategy_result(const workload&, strategy_kind, const run_options&)>;

// The GPU's memory as the depth search reads it before each step.
struct gpu_memory {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
};
using memory_reader = std::function<gpu_memory()>;
// The least free memory over `devices` (each GPU holds a replica's slots) and the card's total.
[[nodiscard]] memory_reader device_memory_reader(const std::vector<int>& devices);

// `run` measures one count (one trial of run_cell's path; tests pass a model of it). Without a
// `memory` reader, only the 8 GiB cap on the requests' own bytes limits the depth.
[[nodiscard]] inflight_choice choose_inflight(const workload& w, strategy_kind strategy, const run_options& options,
                                              const cell_function& run, const memory_reader& memory = {});

struct calibration {
  strategy_kind chosen = strategy_kind::pinned;
  std::vector<strategy_result> trials;
  std::string explanation;
};

// What one request of the workload moves on GPU `device` (its engine resolved at its shapes), for
// ferry::choose: ferry::io_traffic_of, the bytes its kernels read included; the kernel's
// re-reading of its input is not known here, so it counts as once.
[[nodiscard]] io_traffic traffic_of(const workload& w, int device);

// `--strategy auto`: a short run of every available host-input strategy on the actual workload,
// then the pick for the objective, with the reason in words.
[[nodiscard]] calibration choose_strategy(const workload& w, objective goal,
                                          const run_options& options);

// Fills in report.winner and report.recommendation from the results and the platform.
void decide_winner(bench_report& report, objective goal, const std::string& platform_advice);

}  // namespace ferry::bench
