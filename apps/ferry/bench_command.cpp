// `ferry bench`: flags in the spirit of trtexec, a compact default matrix when none are given;
// `ferry bench compare A.json B.json` tells which cells of two reports differ beyond their noise.
// The sweep itself lives in the library (ferry/bench/matrix.hpp); this file parses and prints.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "device_option.hpp"
#include "ferry/bench/compare.hpp"
#include "ferry/bench/matrix.hpp"
#include "ferry/bench/report.hpp"
#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/device/device_diagnosis.hpp"
#include "ferry/device/device_set.hpp"
#include "ferry/engines/backend.hpp"
#include "ferry/frontend/bench_flags.hpp"
#include "ferry/frontend/plot.hpp"
#include "ferry/memory/profile.hpp"

namespace ferry::cli {
namespace {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) throw invalid_argument("cannot write '" + path + "'");
  out << text;
}

// What compare takes: one report as `ferry bench --json` wrote it. Anything else is refused in one
// line naming the file and what was expected, never with the JSON parser's own words.
bench::bench_report read_report(const std::string& path) {
  const std::string expected = "expected a ferry bench report (ferry bench --json FILE writes one)";
  std::ifstream in(path);
  if (!in) throw invalid_argument("cannot read '" + path + "'");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    throw invalid_argument("'" + path + "' is not JSON: " + expected);
  }
  // scripts/collect_reports.py keeps a folder's reports as one {"NAME": report, ...}.
  const auto is_report = [](const nlohmann::json& v) { return v.is_object() && v.contains("results"); };
  if (j.is_object() && !j.empty() && !j.contains("results") && std::all_of(j.begin(), j.end(), is_report))
    throw invalid_argument(fmt::format(
        "'{}' holds {} reports collected by scripts/collect_reports.py, not one: {}; write the one to compare to a "
        "file of its own",
        path, j.size(), expected));
  if (!j.is_object() || !j.contains("results"))
    throw invalid_argument("'" + path + "' is " +
                           (j.is_object() && j.contains("curves") ? "a calibration profile (ferry calibrate)"
                                                                  : std::string("JSON without \"results\"")) +
                           ": " + expected);
  try {
    return bench::report_from_json(j);
  } catch (const invalid_argument& e) {
    throw invalid_argument("'" + path + "': " + e.what());
  }
}

void progress(const std::string& line) { std::cerr << "  " << line << "...\r" << std::flush; }
void clear_progress() { std::cerr << std::string(72, ' ') << '\r'; }

void run_bench(frontend::bench_flags& f, bool device_given, const std::string& command_line) {
  bench::run_options options = frontend::prepare_bench(f, device_given);

  if (f.placement) {
    const auto results = bench::run_placement_matrix(f.matrix, options.devices,
                                                     f.iterations > 0 ? static_cast<int>(f.iterations) : 200, progress);
    clear_progress();
    std::cout << bench::render_placement_table(results);
    if (!f.json.empty()) write_file(f.json, bench::placement_costs_to_json(results).dump(2) + "\n");
    return;
  }

  const bench::bench_report report = bench::run_matrix(f.matrix, options, command_line, progress);
  clear_progress();
  std::cout << bench::render_table(report);
  if (!f.json.empty()) write_file(f.json, bench::to_json(report).dump(2) + "\n");
  if (!f.csv.empty()) write_file(f.csv, bench::render_csv(report));
  if (!f.md.empty()) write_file(f.md, bench::render_markdown(report));
  if (!f.plot.empty()) {
    // The plot script reads the JSON report: --json's file, else one of its own, removed after.
    std::filesystem::path json_path = f.json;
    if (f.json.empty()) {
      json_path = std::filesystem::temp_directory_path() / fmt::format("ferry-plot-{}.json", ::getpid());
      write_file(json_path.string(), bench::to_json(report).dump(2) + "\n");
    }
    try {
      frontend::render_plot(json_path.string(), f.plot);
    } catch (...) {
      if (f.json.empty()) std::filesystem::remove(json_path);
      throw;
    }
    if (f.json.empty()) std::filesystem::remove(json_path);
  }
  // The GPU's context is lost: every report above holds what was measured before; main exits with
  // its own code, without the cleanup that would call CUDA in the lost context.
  if (!report.device_fault.empty())
    throw device_fault(cudaErrorLaunchFailure,
                       fmt::format("the GPU faulted, and the run stopped: {}; the reports hold the {} cells measured "
                                   "before; this process cannot use the GPU again",
                                   report.device_fault, report.results.size() - bench::count_failed(report)));
  // Every report is written with the failed cells and their reasons; the exit code says so too.
  if (const std::size_t failed = bench::count_failed(report); failed > 0)
    throw error(fmt::format("{} of {} cells failed (the report gives each reason)", failed, report.results.size()));
}

void add_compare_command(CLI::App& bench) {
  struct compare_flags {
    std::vector<std::string> files;
    std::string json;
    double fail_above = -1;  // percent; < 0: never fail
    std::string on = "both";
    bool allow_different_hosts = false;
  };
  auto f = std::make_shared<compare_flags>();
  auto* cmd = bench.add_subcommand("compare", "which cells of two bench reports (--json) differ beyond their noise");
  cmd->add_option("reports", f->files, "A.json B.json")->required()->expected(2)->check(CLI::ExistingFile);
  cmd->add_option("--json", f->json, "also write the comparison here, cell by cell, as JSON");
  cmd->add_option("--fail-above", f->fail_above,
                  "exit 1 when a cell is slower in B than in A beyond its noise and by more than this percent, on "
                  "the figure(s) --on names (a gate for CI); reports that share no measured cell, or fewer than half "
                  "of A's or of B's, are refused (exit 2) instead of passing")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--on", f->on,
                  "the figure --fail-above judges: 'end-to-end' (the median latency, or req/s: what a caller sees, "
                  "and what a noisy host moves), 'gpu' (the GPU's time per request from CUDA events: copies in, "
                  "engine, copies out), or 'both' (failing on either; default). Every cell is shown on both; a "
                  "cell of a report without the GPU figure is judged end to end")
      ->check(CLI::IsMember({"end-to-end", "gpu", "both"}));
  cmd->add_flag("--allow-different-hosts", f->allow_different_hosts,
                "compare reports of another GPU, driver, runtime or link (refused otherwise)");
  cmd->callback([f] {
    const auto a = read_report(f->files.at(0));
    const auto b = read_report(f->files.at(1));
    const auto differ = bench::host_differences(a.machine, b.machine);
    std::string hosts;
    for (const auto& d : differ) hosts += (hosts.empty() ? "" : "; ") + d;
    if (!differ.empty() && !f->allow_different_hosts)
      throw invalid_argument("the reports were measured on different machines (" + hosts +
                             "): their cells differ for that reason alone; --allow-different-hosts compares them "
                             "anyway");
    const auto comparison = bench::compare_reports(a, b);
    // A gate over cells the reports do not share would pass whatever B measured.
    const std::string overlap = bench::overlap_problem(comparison);
    if (!overlap.empty() && f->fail_above >= 0)
      throw invalid_argument(overlap + ": --fail-above has too little to judge");
    std::cout << bench::render_comparison(comparison, f->files.at(0), f->files.at(1));
    if (!differ.empty()) std::cout << "note: different machines (" << hosts << ")\n";
    if (!overlap.empty()) std::cerr << "ferry bench compare: warning: " << overlap << '\n';
    if (!f->json.empty()) write_file(f->json, bench::to_json(comparison).dump(2) + "\n");
    if (f->fail_above < 0) return;
    const bench::judged_figure on = bench::parse_judged_figure(f->on).value_or(bench::judged_figure::both);
    const auto worse = bench::regressions(comparison, f->fail_above, on);
    if (worse.empty()) return;
    // A cell slower on both figures is named once per figure, the figure after its change.
    std::string cells;
    std::vector<const bench::cell_comparison*> distinct;
    for (const auto& w : worse) {
      cells += fmt::format("{}{} ({:.1f}%{})", cells.empty() ? "" : ", ", w.cell->label, 100 * std::abs(w.change),
                           w.figure == "gpu" ? " on the GPU" : "");
      if (std::find(distinct.begin(), distinct.end(), w.cell) == distinct.end()) distinct.push_back(w.cell);
    }
    throw error(fmt::format("{} cell{} slower in B by more than {}% beyond the noise{}: {}", distinct.size(),
                            distinct.size() == 1 ? "" : "s", f->fail_above,
                            on == bench::judged_figure::both ? "" : fmt::format(" (--on {})", f->on), cells));
  });
}

std::string strategy_help() {
  std::string names;
  for (const auto k : all_strategies) names += (names.empty() ? "" : ", ") + std::string(to_string(k));
  return "strategies: a list of " + names +
         "; or 'all', or 'auto' (from this GPU's profile, see ferry calibrate; without one it calibrates on the "
         "workload)";
}

}  // namespace

void add_bench_command(CLI::App& app, std::string command_line) {
  auto flags = std::make_shared<frontend::bench_flags>();
  frontend::bench_flags& f = *flags;
  auto* cmd = app.add_subcommand("bench", "measure transfer strategies on an engine (defaults: a compact matrix)");
  cmd->add_option("--engine", f.matrix.engines,
                  "engine(s): touch, reduce, sparse:<fraction>, mlp:<layers>x<width>, or a model file BACKEND:PATH "
                  "(torch:PATH.pt2, trt:PATH.plan, ...: `ferry info` lists the backends)")
      ->delimiter(',');
  cmd->add_option("--backend-directory", f.backend_directory,
                  "folder searched first for model files' backends (libferry_backend_NAME.so), before "
                  "FERRY_BACKEND_PATH and the folder beside ferry");
  cmd->add_option("--strategy", f.strategies, strategy_help());
  cmd->add_option("--size", f.matrix.sizes, "input size(s) of touch/reduce/sparse, e.g. 0.6MB,19MB,64MB")
      ->delimiter(',');
  cmd->add_option("--batch", f.matrix.batch, "batch (mlp; images with --preprocess; model files)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--shape", f.matrix.shapes, "NAME:D1xD2... concrete input shape (repeatable)");
  cmd->add_option("--preprocess", f.matrix.preprocess, "GPU preprocessing in front of the engine: u8-normalize");
  cmd->add_option("--inflight", f.inflight,
                  "slots in flight per GPU, or 'auto' (raise until throughput stops rising; the default for "
                  "--objective throughput, else 1)");
  cmd->add_option("--clients", f.clients, "closed-loop client threads")->check(CLI::Range(1, 1024));
  cmd->add_option("--iterations", f.iterations, "a fixed number of requests per cell instead of sampling until quiet");
  cmd->add_option("--max-noise", f.max_noise_percent,
                  "stop a cell once its median is known to this many percent (relative standard error, the larger of "
                  "within and between trials; default 1)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--min-samples", f.min_samples, "at least this many requests per cell (default 40)");
  cmd->add_option("--max-time", f.max_time,
                  "at most this many seconds of measuring per cell, its trials together; a cell still noisier than "
                  "--max-noise is flagged (default 4)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--trials", f.trials,
                  "measure each cell as at least this many trials, each with fresh buffers, spread over the run "
                  "(default 3); the report gives the noise between them beside the noise within")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100}));
  cmd->add_option("--max-trials", f.max_trials,
                  "more trials while a cell is noisier than --max-noise and its --max-time is not spent, up to this "
                  "many (default 6)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100}));
  cmd->add_option("--schedule", f.schedule,
                  "interleaved (default): the trials of every cell in rounds, in a changing order, so a drift of the "
                  "host moves every cell alike; sequential: each cell's trials back to back")
      ->check(CLI::IsMember({"interleaved", "sequential"}));
  cmd->add_option("--memory-margin", f.memory_margin_percent,
                  "--inflight auto stops before a depth whose slots would leave less than this percentage of the "
                  "GPU's memory free (default 10)")
      ->check(CLI::Range(0.0, 90.0));
  cmd->add_option("--slowdown", f.slowdown_percent,
                  "a test hook, a known change to check `ferry bench compare` against on both of its figures "
                  "(default 0): on the GPU, a kernel that spins on the GPU's clock after the engine, on the slot's "
                  "stream, makes each request's GPU time (gpu_us, from CUDA events) this percentage longer; on the "
                  "host, each timed request then waits until its end-to-end latency is this percentage longer "
                  "before its clock stops. The recipe and the floor get the wait alone")
      ->check(CLI::Range(0.0, 1000.0));
  cmd->add_option("--duration", f.duration,
                  "with --objective throughput: the shortest window a cell measures (default 1 s); it goes on until "
                  "the rate is known to --max-noise, at most --max-time")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--warmup,!--no-warmup", f.warmup,
                "warm every slot up before measuring (default); --no-warmup measures a cold start");
  cmd->add_flag("--graph", f.graph,
                "run requests as CUDA graphs: each slot's pipeline captured, or, where a plain capture cannot "
                "take the engine (AOTInductor packages), graphs the engine captures of its own run");
  cmd->add_flag("--recipes,!--no-recipes", f.recipes,
                "time each strategy's hand-written recipe and the device floor beside it, one request of each in "
                "turn (default, where a cell runs one request at a time)");
  cmd->add_option("--objective", f.objective, "what the winner and auto optimise")
      ->check(CLI::IsMember({"latency", "throughput"}));
  cmd->add_option("--input-writes", f.input_writes,
                  "how the CPU writes each request's fresh input: streaming (non-temporal stores, default) or cached")
      ->check(CLI::IsMember({"cached", "streaming"}));
  cmd->add_option("--input-data", f.input_data,
                  "the values each input gets: auto (default: random floats; integers inside their index_bound, "
                  "zeros where none is known; booleans false), zero, random (refuses an integer input with no "
                  "index_bound), or a .json (perf_analyzer's form) or .npz file with each input's values, checked "
                  "against the model's shapes, dtypes and bounds");
  cmd->add_option("--index-bound", f.index_bounds,
                  "INPUT=N: a model file's integer input takes values in [0, N) (token ids: the vocabulary size), "
                  "where its file does not say; repeat for several inputs");
  cmd->add_flag("--index-checks,!--no-index-checks", f.index_checks,
                "check inputs that have an index_bound on the GPU before the engine reads them, as `ferry serve` "
                "does (default); --no-index-checks leaves the check's few microseconds out");
  cmd->add_option("--json", f.json, "write the JSON report here");
  cmd->add_option("--profile", f.profile,
                  "this profile (ferry calibrate) instead of the GPU's own in $XDG_CACHE_HOME/ferry/profiles: "
                  "--strategy auto picks from it, and with several strategies the report checks its pick "
                  "against the best measured");
  cmd->add_option("--csv", f.csv, "write the CSV report here");
  cmd->add_option("--md", f.md, "write the markdown report here");
  cmd->add_option("--plot", f.plot,
                  "draw which strategy is fastest at each input size here (.png or .svg; one panel per engine: "
                  "the median latency, or the rate with --objective throughput)");
  auto* device_option = add_device_option(*cmd, f.device, "measure on this GPU", "GPU 0");
  cmd->add_option("--devices", f.devices,
                  "GPUs to spread requests over: 0,1 or all (one engine replica with --inflight slots on each; "
                  "requests go to the least-loaded GPU)");
  cmd->add_flag("--allow-oversubscription", f.allow_oversubscription,
                "let managed buffers exceed free device memory (can stall a shared GPU)");
  cmd->add_flag("--no-um-counters", f.no_um_counters, "do not collect CUPTI unified-memory counters");
  cmd->add_flag("--no-l2-flush", f.no_l2_flush,
                "do not evict the GPU's L2 cache before each timed request (done by default where a cell runs one "
                "request at a time, so that no request finds the last one's data cached)");
  cmd->add_flag("--no-link-measure", f.no_link_measure, "skip measuring the pinned link peak");
  cmd->add_flag("--placement", f.placement,
                "instead of strategies: with --devices, what running where the data is saves (inputs and "
                "outputs on one GPU, the engine on each GPU; peer copies timed); --json writes its results");
  add_compare_command(*cmd);
  cmd->callback([flags, cmd, device_option, line = std::move(command_line)] {
    if (cmd->got_subcommand("compare")) return;  // compare ran from its own callback
    run_bench(*flags, device_option->count() > 0, line);
  });
}

}  // namespace ferry::cli
