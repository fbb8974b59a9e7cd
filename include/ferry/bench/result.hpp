// The machine-readable outcome of `ferry bench`: plain data, kept apart from every rendering
// (terminal table, markdown, JSON, CSV, plots), as nvbench and nvbandwidth do.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ferry/bench/field_table.hpp"
#include "ferry/device/gpu_clocks.hpp"
#include "ferry/memory/strategy.hpp"

namespace ferry::bench {

// Robust summary of one series of samples (microseconds unless the field says otherwise).
struct sample_stats {
  std::size_t count = 0;
  double median = 0;
  double p90 = 0;
  double p99 = 0;
  double p999 = 0;  // the tail a server's SLO is often set on; known only with thousands of samples
  double min = 0;
  double max = 0;
  double iqr = 0;  // p75 - p25
  double mean = 0;
};

template <>
struct field_table<sample_stats> {
  using s = sample_stats;
  static constexpr auto fields = std::tuple{
      figure("count", &s::count, "", "samples in the series"),
      figure("median", &s::median, "µs", "the median"),
      figure("p90", &s::p90, "µs", "90th percentile").as_column("p90 µs"),
      figure("p99", &s::p99, "µs", "99th percentile").as_column("p99 µs"),
      figure("p999", &s::p999, "µs", "99.9th percentile").as_column("p99.9 µs"),
      figure("min", &s::min, "µs", "the fastest sample"),
      figure("max", &s::max, "µs", "the slowest sample"),
      figure("iqr", &s::iqr, "µs", "p75 - p25"),
      figure("mean", &s::mean, "µs", "the mean"),
  };
};

// Unified-memory traffic seen by CUPTI, per request (see result_diagnostics::um_note for how).
struct um_traffic {
  std::uint64_t bytes_host_to_device = 0;
  std::uint64_t bytes_device_to_host = 0;
  std::uint64_t gpu_page_faults = 0;
  std::uint64_t cpu_page_faults = 0;
};

template <>
struct field_table<um_traffic> {
  using u = um_traffic;
  static constexpr auto fields = std::tuple{
      figure("bytes_host_to_device", &u::bytes_host_to_device, "bytes", "migrated to the GPU per request"),
      figure("bytes_device_to_host", &u::bytes_device_to_host, "bytes", "migrated to the host per request"),
      figure("gpu_page_faults", &u::gpu_page_faults, "", "GPU page faults per request"),
      figure("cpu_page_faults", &u::cpu_page_faults, "", "CPU page faults per request"),
  };
};

// A run measured in the same cell as a strategy, one request of each in turn, so that a drift of
// the host or the GPU during the cell moves both alike:
//  - the recipe: the strategy's own steps written as directly as the CUDA runtime allows (no
//    session, no slots, one stream); the gap between the two is ferry's cost, not the platform's;
//  - the floor: the engine alone on device-resident inputs, what no strategy can beat.
struct side_run {
  std::string steps;  // what it runs, in words
  std::size_t iterations = 0;
  sample_stats latency_us;  // measured as the strategy's latency: after the fill, to outputs read
  double noise = 0;         // median_noise of latency_us
  bool output_checked = false;
  bool output_matches = false;
  std::string check_detail;
};

template <>
struct field_table<side_run> {
  using s = side_run;
  static constexpr auto fields = std::tuple{
      figure("steps", &s::steps, "", "what it runs, in words"),
      figure("iterations", &s::iterations, "", "its latency samples"),
      figure("latency_us", &s::latency_us, "µs", "its latency, measured as the strategy's"),
      figure("noise", &s::noise, "fraction", "median_noise of its latency"),
      figure("output_checked", &s::output_checked, "", "its outputs were compared with the reference"),
      figure("output_matches", &s::output_matches, "", "they matched"),
      figure("check_detail", &s::check_detail, "", "the first mismatch, or how many elements were compared"),
  };
};

template <>
struct field_table<clock_record> {
  using c = clock_record;
  static constexpr auto fields = std::tuple{
      figure("sm_mhz_min", &c::sm_mhz_min, "MHz", "the lowest SM clock seen"),
      figure("sm_mhz_max", &c::sm_mhz_max, "MHz", "the highest SM clock seen"),
      figure("mem_mhz_min", &c::mem_mhz_min, "MHz", "the lowest memory clock seen"),
      figure("mem_mhz_max", &c::mem_mhz_max, "MHz", "the highest memory clock seen"),
      figure("throttle_reasons", &c::throttle_reasons, "", "throttle reasons seen in any sample"),
      figure("samples", &c::samples, "", "clock readings"),
      figure("changed", &c::changed, "", "a clock moved or a throttle reason appeared"),
  };
};

// One trial of a cell, as nvbench separates them: buffers made afresh, its own warm-up and
// samples. A cell's trials are spread over the run (ferry/bench/trials.hpp), so their spread shows
// what moves over minutes (host load, where buffers landed, which cell ran before), which the
// samples of one stretch cannot.
struct trial_figures {
  double started_seconds = 0;  // when the trial started, after the run's first trial
  double wall_seconds = 0;     // its measuring loop (warm-up and set-up not counted)
  std::size_t iterations = 0;  // its latency samples
  double median_us = 0;        // its median latency
  double noise = 0;            // median_noise of its samples
  // Its median GPU time per request (result_figures::gpu_us); 0 in older reports.
  double gpu_median_us = 0;
  double throughput_per_s = 0;
  double throughput_noise = 0;
};

template <>
struct field_table<trial_figures> {
  using t = trial_figures;
  static constexpr auto fields = std::tuple{
      figure("started_seconds", &t::started_seconds, "s", "when the trial started, after the run's first"),
      figure("wall_seconds", &t::wall_seconds, "s", "its measuring loop"),
      figure("iterations", &t::iterations, "", "its latency samples"),
      figure("median_us", &t::median_us, "µs", "its median latency"),
      // CSV: "trial_noise" is the cell's noise between trials.
      figure("noise", &t::noise, "fraction", "median_noise of its samples").in_csv_as("noise_each"),
      figure("gpu_median_us", &t::gpu_median_us, "µs", "its median GPU time per request"),
      figure("throughput_per_s", &t::throughput_per_s, "1/s", "its requests per second"),
      figure("throughput_noise", &t::throughput_noise, "fraction", "rate_noise of its requests"),
  };
};

// One (workload, size, strategy) cell of the matrix, in four parts, each a struct with its own
// field table: what ran (result_identity), what was measured (result_figures), what the run saw
// around the measurement (result_diagnostics), and whether the figures hold (result_verdict).
// strategy_result holds them as members (`r.figures.latency_us`, `r.verdict.measured()`), so a
// caller reads the part it uses and a function that needs one part takes just that part; a new
// figure is one member of its part and its row in the part's table. The field-table walk
// flattens the parts into the one flat object of keys that every report has had.

// What ran: the workload, the strategy and the settings it ran with.
struct result_identity {
  // nullopt: `--strategy auto` whose pick never ran (its group failed first); reports write it "auto".
  std::optional<strategy_kind> strategy;
  std::string engine;            // "reduce", "mlp:4x4096", "u8-normalize+reduce", ...
  std::size_t input_bytes = 0;   // per request, all inputs together
  std::size_t output_bytes = 0;  // per request, all outputs together
  int inflight = 1;
  int clients = 1;
  // GPUs the requests were spread over, one replica of `inflight` slots on each. Empty or one
  // entry: a single-GPU run, whose reports look as they always did.
  std::vector<int> devices;
  bool graph = false;
  bool warmed_up = true;
  // How the CPU wrote each request's input: "streaming" (non-temporal stores, bench's default) or
  // "cached" (ordinary stores). A pinned upload runs ~9% slower after cached writes, so results
  // are comparable only at the same setting.
  std::string input_writes = "streaming";
  // Every timed request began with the GPU's L2 cache evicted (one request at a time, --l2-flush,
  // the default); false where requests overlap, with --no-l2-flush, and in older reports.
  bool l2_flushed = false;
  // How the cell's trials ran beside the run's other cells: "interleaved" (in rounds, one trial of
  // every cell per round in a changing order, so a drift moves every cell alike) or "sequential"
  // (each cell's trials back to back); empty in older reports.
  std::string schedule;
  // What each input was given, one line per input (ferry/session/input_data.hpp's describe:
  // "input_ids: random in [0, 30522), checked on the GPU"); empty in older reports and for cells
  // not planned.
  std::vector<std::string> input_data;
};

// What was measured. Meaningless unless the verdict says measured.
struct result_figures {
  std::size_t iterations = 0;
  double wall_seconds = 0;
  sample_stats latency_us;  // end to end on the host: input written -> output readable
  sample_stats fill_us;     // CPU writing the fresh input (not part of latency; faults show here)
  sample_stats h2d_us;      // CUDA-event breakdown of the device side
  sample_stats compute_us;
  sample_stats d2h_us;
  // Host time spent enqueueing one request's work (the engine's launches included). As large as
  // compute_us, the engine is launch-bound: the GPU waits on the CPU, and the CPU's speed is in
  // every figure of the cell.
  sample_stats enqueue_us;
  // The GPU's own time per request, from the CUDA events on the slot's stream: the first before
  // the upload to the last after the download (copy strategies), the engine's span where nothing
  // is copied (mapped, managed, system, device), the graph's span in graph mode; for
  // managed-prefetch plus the host time of its prefetch calls. The host's writes, reads and
  // wake-ups are not in it, so it moves far less between runs than latency_us does on a noisy
  // host: compare judges it beside latency. count 0: an older report without it.
  sample_stats gpu_us;
  double cold_first_us = 0;          // the first request, kept out of the statistics
  double cold_first_percentile = 0;  // percent of timed requests no faster than the first one
  double throughput_per_s = 0;
  double h2d_gbps = 0;  // input_bytes / median h2d time (0 where nothing is copied)
  double d2h_gbps = 0;
  double relative_iqr = 0;  // iqr / median of latency: the spread of requests
  // How well the cell's figures are known: median_noise of latency (the relative standard error
  // of the median), and rate_noise of throughput.
  // Both pool the samples of every trial: the noise within trials.
  double noise = 0;
  double throughput_noise = 0;
  // The noise between trials: the standard error of the trials' mean figure relative to it
  // (trial_noise in stats.hpp), 0 with fewer than two trials (and in older reports). What one run
  // cannot show of another shows here; stopping, the noisy flag and compare use the larger of the
  // two noises (judged_noise).
  double trial_noise = 0;
  double throughput_trial_noise = 0;
  // The same two noises for the median of gpu_us (0 where it has none).
  double gpu_noise = 0;
  double gpu_trial_noise = 0;
  std::vector<trial_figures> trials;
  // Device memory the cell held at the end of a trial's measurement (free memory before the trial
  // less free memory then, on its first GPU; the most over its trials): what `--inflight auto`
  // extrapolates the next depth's need from.
  std::size_t device_bytes_used = 0;
};

// What the run saw around the measurement: the side runs, the GPU's clocks, the host and driver
// probes, unified-memory counters, and the notes that say why one of them is missing.
struct result_diagnostics {
  std::optional<side_run> recipe;  // the strategy's steps by hand, measured beside it
  std::optional<side_run> floor;   // the engine on device-resident inputs, measured beside it
  std::string recipe_note;         // why there is no recipe or floor (several clients, ...)

  std::optional<clock_record> clocks;  // nullopt: see clocks_note
  std::string clocks_note;
  // The host CPU's speed over the cell: a fixed piece of CPU work (~20 us on a 3 GHz core), timed
  // beside the requests. Its median, and how far it moved (p75 / p25 - 1) while the cell ran.
  double host_probe_us = 0;
  double host_probe_spread = 0;
  // The CUDA driver's speed over the cell, likewise: eight event records on an idle stream and a
  // synchronize. Launch-bound engines and small requests move with it.
  double cuda_probe_us = 0;
  double cuda_probe_spread = 0;
  // The host's memory bandwidth over the cell, likewise: a copy of 8 MB between two host buffers
  // (bytes read + written per second), timed between requests about every 0.1 s where they run one
  // at a time, before and after the clients where several run at once. Large pageable, staged and
  // host-path requests move with it (the CPU writes and reads every byte); the GPU's own time does
  // not. 0: not measured (older reports).
  double host_copy_gbps = 0;
  double host_copy_spread = 0;

  std::vector<std::string> notes;  // visible fallbacks and caveats (e.g. graph capture failed)

  std::optional<um_traffic> um;  // nullopt: see um_note
  std::string um_note;           // why counters are missing, where they are
};

// How a cell ended. Measured: its figures hold. Refused: the platform cannot run the strategy
// (not an error of this run). Failed: an error of this run (out of memory, a CUDA or engine
// failure): the run goes on, and its exit code says a cell failed. Reports write it as they always
// have: a "refused" reason (null when measured) and a "failed" flag.
struct measured_cell {
  friend bool operator==(const measured_cell&, const measured_cell&) = default;
};
struct refused_cell {
  std::string reason;
  friend bool operator==(const refused_cell&, const refused_cell&) = default;
};
struct failed_cell {
  std::string reason;
  friend bool operator==(const failed_cell&, const failed_cell&) = default;
};
using cell_outcome = std::variant<measured_cell, refused_cell, failed_cell>;

// Whether the figures hold: the cell's outcome, its outputs' check, and how sure its figures are
// (noisy and stopped judge the figures against the limit asked for, so they sit with the other
// judgements a reader makes before using a cell, not among the figures themselves).
struct result_verdict {
  cell_outcome outcome;

  bool output_checked = false;
  bool output_matches = false;
  std::string check_detail;  // first mismatch, or how many elements were compared

  double max_noise = 0;  // the limit asked for (--max-noise)
  // The figure the cell is judged on (latency, or throughput for throughput cells) is noisier
  // than max_noise: sampling stopped at its cap first.
  bool noisy = false;
  std::string stopped;  // how sampling ended, in words

  [[nodiscard]] bool measured() const noexcept { return std::holds_alternative<measured_cell>(outcome); }
  [[nodiscard]] bool failed() const noexcept { return std::holds_alternative<failed_cell>(outcome); }
  // Why there are no figures (refused or failed); empty when measured.
  [[nodiscard]] const std::string& reason() const noexcept {
    static const std::string none;
    if (const auto* r = std::get_if<refused_cell>(&outcome)) return r->reason;
    if (const auto* f = std::get_if<failed_cell>(&outcome)) return f->reason;
    return none;
  }
  void refuse(std::string why) { outcome = refused_cell{std::move(why)}; }
  void fail(std::string why) { outcome = failed_cell{std::move(why)}; }
  // Refused or failed, as a caller's flag says.
  void not_measured(std::string why, bool as_failure) {
    if (as_failure) {
      fail(std::move(why));
    } else {
      refuse(std::move(why));
    }
  }
};

struct strategy_result {
  result_identity identity;
  result_figures figures;
  result_diagnostics diagnostics;
  result_verdict verdict;
};

// Every field of a result, part by part: the JSON writer and reader and the CSV writer iterate
// them as one flat list of keys, and the terminal and markdown tables show the ones with a column
// title.
template <>
struct field_table<strategy_result> {
  static constexpr auto parts = std::tuple{&strategy_result::identity, &strategy_result::figures,
                                           &strategy_result::diagnostics, &strategy_result::verdict};
};

template <>
struct field_table<result_identity> {
  using r = result_identity;
  static constexpr auto fields = std::tuple{
      figure("strategy", &r::strategy, "", "the transfer strategy (its name, as --strategy reads it)"),
      figure("engine", &r::engine, "", "the workload"),
      figure("input_bytes", &r::input_bytes, "bytes", "per request, all inputs together"),
      figure("output_bytes", &r::output_bytes, "bytes", "per request, all outputs together"),
      figure("inflight", &r::inflight, "", "slots per GPU"),
      figure("clients", &r::clients, "", "closed-loop clients"),
      figure("devices", &r::devices, "", "the GPUs requests were spread over"),
      figure("graph", &r::graph, "", "requests ran as CUDA graphs"),
      figure("warmed_up", &r::warmed_up, "", "the sessions were warmed up"),
      // Reports from before the field existed wrote their inputs with ordinary stores.
      figure("input_writes", &r::input_writes, "", "how the CPU wrote each input").when_absent("cached"),
      figure("l2_flushed", &r::l2_flushed, "", "each timed request began with the L2 cache evicted"),
      figure("schedule", &r::schedule, "", "interleaved or sequential"),
      figure("input_data", &r::input_data, "", "the values each input was given"),
  };
};

// Figures derived from others: computed where they are declared, written in every report (and in
// every older one read back), never read.
struct derived_figures {
  // Input and output bytes per request, times requests per second: the bytes a cell moved.
  static double throughput_gbps(const strategy_result& r) {
    return static_cast<double>(r.identity.input_bytes + r.identity.output_bytes) * r.figures.throughput_per_s / 1e9;
  }
};

template <>
struct field_table<result_figures> {
  using r = result_figures;
  using derived = derived_figures;
  static constexpr auto fields = std::tuple{
      figure("iterations", &r::iterations, "", "latency samples over every trial"),
      figure("wall_seconds", &r::wall_seconds, "s", "the trials' measuring loops together"),
      figure("latency_us", &r::latency_us, "µs", "input written -> output readable"),
      figure("fill_us", &r::fill_us, "µs", "the CPU writing the fresh input"),
      figure("h2d_us", &r::h2d_us, "µs", "the upload stage"),
      figure("compute_us", &r::compute_us, "µs", "the engine's stage"),
      figure("d2h_us", &r::d2h_us, "µs", "the download stage"),
      figure("enqueue_us", &r::enqueue_us, "µs", "host time enqueueing one request"),
      figure("gpu_us", &r::gpu_us, "µs", "the GPU's time per request, from CUDA events: copies in, engine, copies out"),
      figure("cold_first_us", &r::cold_first_us, "µs", "the first request"),
      figure("cold_first_percentile", &r::cold_first_percentile, "%", "timed requests no faster than the first"),
      figure("throughput_per_s", &r::throughput_per_s, "1/s", "requests per second"),
      computed<strategy_result, double>("throughput_gbps", &derived::throughput_gbps, nullptr, "GB/s",
                                        "bytes moved per second, inputs and outputs together")
          .as_column("moved GB/s"),
      figure("h2d_gbps", &r::h2d_gbps, "GB/s", "input bytes over the median upload"),
      figure("d2h_gbps", &r::d2h_gbps, "GB/s", "output bytes over the median download"),
      figure("relative_iqr", &r::relative_iqr, "fraction", "iqr / median of latency"),
      figure("noise", &r::noise, "fraction", "median_noise of latency within trials"),
      figure("throughput_noise", &r::throughput_noise, "fraction", "rate_noise of throughput within trials"),
      figure("trial_noise", &r::trial_noise, "fraction", "the noise of the median between trials"),
      figure("throughput_trial_noise", &r::throughput_trial_noise, "fraction", "the rate's noise between trials"),
      figure("gpu_noise", &r::gpu_noise, "fraction", "median_noise of the GPU time within trials"),
      figure("gpu_trial_noise", &r::gpu_trial_noise, "fraction", "the noise of the GPU time's median between trials"),
      // CSV: the count under "trials", each trial's figures in "trial_<key>" columns.
      figure("trials", &r::trials, "", "each trial's figures").in_csv_as("trial"),
      figure("device_bytes_used", &r::device_bytes_used, "bytes", "device memory the cell held"),
  };
};

template <>
struct field_table<result_diagnostics> {
  using r = result_diagnostics;
  static constexpr auto fields = std::tuple{
      figure("recipe", &r::recipe, "", "the strategy's steps by hand, measured beside it"),
      figure("floor", &r::floor, "", "the engine on device-resident inputs, measured beside it"),
      figure("recipe_note", &r::recipe_note, "", "why there is no recipe or floor"),
      figure("clocks", &r::clocks, "", "the GPU's clocks over the cell"),
      figure("clocks_note", &r::clocks_note, "", "why there are no clock readings"),
      figure("host_probe_us", &r::host_probe_us, "µs", "the host CPU probe's median"),
      figure("host_probe_spread", &r::host_probe_spread, "fraction", "how far the host probe moved"),
      figure("cuda_probe_us", &r::cuda_probe_us, "µs", "the CUDA driver probe's median"),
      figure("cuda_probe_spread", &r::cuda_probe_spread, "fraction", "how far the CUDA probe moved"),
      figure("host_copy_gbps", &r::host_copy_gbps, "GB/s", "the host memory-copy probe's median, bytes read + written"),
      figure("host_copy_spread", &r::host_copy_spread, "fraction", "how far the host memory-copy probe moved"),
      figure("notes", &r::notes, "", "visible fallbacks and caveats"),
      figure("um", &r::um, "", "unified-memory traffic per request"),
      figure("um_note", &r::um_note, "", "why the counters are missing"),
  };
};

// The outcome as the two keys reports have always had. Read in either order: "failed" turns the
// refusal into a failure, "refused" gives either its reason.
struct outcome_keys {
  static std::optional<std::string> refused(const result_verdict& v) {
    return v.measured() ? std::nullopt : std::optional<std::string>(v.reason());
  }
  static void read_refused(result_verdict& v, std::optional<std::string> why) {
    if (why) v.not_measured(std::move(*why), v.failed());
  }
  static bool failed(const result_verdict& v) { return v.failed(); }
  static void read_failed(result_verdict& v, bool failed) {
    if (failed) v.fail(std::string(v.reason()));
  }
};

template <>
struct field_table<result_verdict> {
  using r = result_verdict;
  using keys = outcome_keys;
  static constexpr auto fields = std::tuple{
      computed<r, std::optional<std::string>>("refused", &keys::refused, &keys::read_refused, "",
                                              "why the cell did not run"),
      computed<r, bool>("failed", &keys::failed, &keys::read_failed, "", "the refusal is an error of this run"),
      figure("output_checked", &r::output_checked, "", "outputs were compared with the reference"),
      figure("output_matches", &r::output_matches, "", "they matched"),
      figure("check_detail", &r::check_detail, "", "the first mismatch, or how many elements were compared"),
      figure("max_noise", &r::max_noise, "fraction", "the limit asked for (--max-noise)"),
      figure("noisy", &r::noisy, "", "the judged figure is noisier than max_noise"),
      figure("stopped", &r::stopped, "", "how sampling ended"),
  };
};

// A result's strategy as every report names it.
[[nodiscard]] inline std::string_view strategy_name(const std::optional<strategy_kind>& strategy) noexcept {
  return strategy ? to_string(*strategy) : std::string_view("auto");
}

struct machine_info {
  std::string gpu_name;
  std::string platform;  // to_string(platform_class)
  std::string pcie;      // "Gen5 x16" or ""
  int driver_version = 0;
  int runtime_version = 0;
  double link_peak_h2d_gbps = 0;  // measured pinned peak (0 when not measured)
  double link_peak_d2h_gbps = 0;
  double host_probe_us = 0;  // the probes' times when the run started (see strategy_result)
  double cuda_probe_us = 0;
};

template <>
struct field_table<machine_info> {
  using m = machine_info;
  static constexpr auto fields = std::tuple{
      figure("gpu_name", &m::gpu_name, "", "the GPU"),
      figure("platform", &m::platform, "", "its platform class"),
      figure("pcie", &m::pcie, "", "its PCIe link"),
      figure("driver_version", &m::driver_version, "", "the CUDA driver, 1000 * major + 10 * minor"),
      figure("runtime_version", &m::runtime_version, "", "the CUDA runtime, likewise"),
      figure("link_peak_h2d_gbps", &m::link_peak_h2d_gbps, "GB/s", "the measured pinned upload peak"),
      figure("link_peak_d2h_gbps", &m::link_peak_d2h_gbps, "GB/s", "the measured pinned download peak"),
      figure("host_probe_us", &m::host_probe_us, "µs", "the host probe when the run started"),
      figure("cuda_probe_us", &m::cuda_probe_us, "µs", "the CUDA probe when the run started"),
  };
};

// Whether the profile's advice held on one cell group (an engine at a size) where several
// strategies ran: what ferry::choose picked from this machine's profile against the best measured
// (bench/statistics/advice_check.hpp makes them). A pick within advice_tolerance of the best counts as
// a good one, and so does a pick the same as the best within their noise: another run could have
// ranked them the other way.
inline constexpr double advice_tolerance = 0.05;

struct advice_check {
  std::string engine;
  std::size_t input_bytes = 0;
  std::string picked;       // the profile's pick
  std::string best;         // the best strategy measured (empty when none ran with checked outputs)
  double picked_value = 0;  // median µs (latency) or req/s (throughput); 0 when the pick did not run
  double best_value = 0;
  // How much worse the pick is than the best (0.03: 3% slower, or 3% fewer requests per second);
  // nullopt when the pick was not measured or its outputs did not match.
  std::optional<double> shortfall;
  // The shortfall the two figures' noise could make on its own: the threshold compare uses for
  // them (difference_threshold of both judged noises); 0 where they carry no noise.
  double noise = 0;
  std::string note;  // why there is no shortfall, when there is none
  [[nodiscard]] bool within(double tolerance = advice_tolerance) const noexcept {
    return shortfall && *shortfall <= std::max(tolerance, noise) + 1e-9;  // 420 / 400 - 1 is 0.05 and a bit
  }
};

template <>
struct field_table<advice_check> {
  using a = advice_check;
  static constexpr auto fields = std::tuple{
      figure("engine", &a::engine, "", "the cell group's workload"),
      figure("input_bytes", &a::input_bytes, "bytes", "its input size"),
      figure("picked", &a::picked, "", "the profile's pick"),
      figure("best", &a::best, "", "the best strategy measured"),
      figure("picked_value", &a::picked_value, "µs or 1/s", "the pick's figure"),
      figure("best_value", &a::best_value, "µs or 1/s", "the best's figure"),
      figure("shortfall", &a::shortfall, "fraction", "how much worse the pick is than the best"),
      figure("noise", &a::noise, "fraction", "the shortfall their noise alone could make"),
      figure("note", &a::note, "", "why there is no shortfall"),
  };
};

struct bench_report {
  std::string date;     // ISO 8601, UTC
  std::string command;  // the command line that produced it
  machine_info machine;
  std::vector<strategy_result> results;
  std::string objective;                    // "latency" or "throughput"
  std::string winner;                       // best strategy for the objective across the matrix
  std::string recommendation;               // one paragraph: what to use and why
  std::vector<advice_check> advice_checks;  // with a profile and several strategies per cell
  // Set when the GPU's context was lost during the run (ferry/core/device_fault.hpp): what happened
  // and where. The cells after it did not run, and the report holds what was measured before.
  std::string device_fault;
};

template <>
struct field_table<bench_report> {
  using b = bench_report;
  static constexpr auto fields = std::tuple{
      figure("date", &b::date, "", "when it ran, ISO 8601 UTC"),
      figure("command", &b::command, "", "the command line"),
      figure("machine", &b::machine, "", "where it ran"),
      figure("results", &b::results, "", "one per cell"),
      figure("objective", &b::objective, "", "latency or throughput"),
      figure("winner", &b::winner, "", "the best strategy for the objective"),
      figure("recommendation", &b::recommendation, "", "what to use and why"),
      figure("advice_checks", &b::advice_checks, "", "the profile's picks against the best measured"),
      figure("device_fault", &b::device_fault, "", "the GPU's context was lost: what happened, where"),
  };
};

}  // namespace ferry::bench
