// What `ferry bench` measures and how: the workload of a cell and the options every cell runs
// with (docs/ARCHITECTURE.md §5). Plain types; cell_runner.hpp runs them.
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
#include "ferry/device/device_caps.hpp"
#include "ferry/engines/engine.hpp"
#include "ferry/memory/strategy.hpp"
#include "ferry/session/input_data.hpp"
#include "ferry/session/session.hpp"

namespace ferry::bench {

// How the benchmark's CPU writes each request's fresh input. A DMA or the GPU reading host memory
// right after ordinary stores runs slower (a 19 MB pinned upload: 87% of the link peak instead
// of 96%; see ferry/memory/streaming_copy.hpp), so the way the input was written is part of what a cell
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
  std::string label;  // as shown in reports ("reduce", "u8-normalize+reduce")
  // The engine for one GPU, called with that GPU current (an engine's contexts live on one
  // device, so a multi-GPU run makes one replica per GPU).
  std::function<std::unique_ptr<engine>(int ordinal)> make_engine;
  std::vector<shape_binding> shapes;  // empty: the engine's defaults
};

struct run_options {
  // The GPUs to spread requests over: one engine replica with `session.inflight` slots on each,
  // requests to the least-loaded one (replica_set). One GPU runs exactly the single-session path.
  std::vector<int> devices{0};
  // What each of `devices` can do, in their order, queried once by the run (run_matrix); empty:
  // a cell queries them once when it is made.
  std::vector<device_caps> capabilities;
  // How every cell's sessions are made; the strategy is each cell's own and is set per cell.
  session_options session{.strategy = strategy_kind::pinned, .inflight = 1};
  // Search the slot count instead (--inflight auto): raise it until throughput stops rising.
  bool inflight_auto = false;
  int clients = 1;
  bool warmup = true;
  // When the warm-up has done its job: the latency has stopped moving (see client_loop.cpp for
  // why one request is not enough). A paired cell allows max_seconds per series it runs.
  settling_rule warmup_rule{
      .min_iterations = 6, .max_iterations = 64, .min_seconds = 0.02, .max_seconds = 0.5, .tolerance = 0.05};
  std::optional<std::size_t> iterations;  // a fixed count instead of sampling until quiet
  sampling_limits limits;                 // when a cell's median is known well enough
  // Throughput cells: requests over a window of at least this long, until the rate's noise is
  // at most limits.max_noise (or limits.max_seconds have passed), whatever the latency's noise.
  std::optional<double> window_seconds;
  std::size_t check_every = 64;  // compare outputs with the reference every N requests
  bool um_counters = true;       // CUPTI unified-memory counters for managed strategies
  // Each strategy's recipe and the floor, timed beside it where the cell runs one request at a
  // time (one client, one slot, one GPU).
  bool recipes = true;
  // Streaming by default: it models a client that follows ferry's advice and writes its inputs
  // with copy_streaming; `--input-writes cached` shows what ordinary stores cost.
  input_writes writes = input_writes::streaming;
  // What each input is given (ferry/session/input_data.hpp: --input-data auto, zero, random or a file);
  // checked against each workload's inputs before any cell runs, and bound to them in each trial.
  input_data data;
  // How run_matrix spreads the trials of its cells (ferry/bench/trials.hpp).
  trial_schedule schedule = trial_schedule::interleaved;
  // `--inflight auto` stops before a depth whose slots would leave less than this share of the
  // card's memory free (what one slot costs is measured at the depths before).
  double memory_margin = 0.10;
  // Where a cell runs one request at a time: evict the GPU's L2 cache before each timed request
  // of the strategy, its recipe and the floor (bench/l2_flush.hpp says why); --no-l2-flush turns
  // it off, to see what a warm cache gives.
  bool l2_flush = true;
  // A test hook (--slowdown), a known change for checking `ferry bench compare` on a real run, on
  // both of its figures: a spin kernel after the engine makes each request's GPU time this share
  // longer, and every timed request's clock stops only once its latency is this share longer
  // (src/bench/measure/gpu_delay.hpp).
  double slowdown = 0;
};

}  // namespace ferry::bench
