// `ferry bench`: flags in the spirit of trtexec, a compact default matrix when none are given.
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "ferry/bench.hpp"
#include "ferry/bench_report.hpp"
#include "ferry/device_caps.hpp"
#include "ferry/device_set.hpp"
#include "ferry/error.hpp"
#include "ferry/link_bandwidth.hpp"
#include "ferry/model_engine.hpp"
#include "ferry/placement_cost.hpp"
#include "ferry/recommendation.hpp"
#include "ferry/workload_factory.hpp"

namespace ferry::cli {
namespace {

struct bench_flags {
  std::vector<std::string> engines{"reduce", "touch"};
  std::string strategies = "all";
  std::vector<std::string> sizes{"0.6MB", "19MB"};
  std::int64_t batch = 16;
  std::vector<std::string> shapes;
  std::string preprocess;
  int inflight = 1;
  int clients = 1;
  std::size_t iterations = 0;
  double duration = 0.5;
  bool warmup = true;
  bool graph = false;
  std::string objective = "latency";
  std::string input_writes = "streaming";
  std::string json, csv, md, plot;
  int device = 0;
  std::string devices;  // --devices; empty: just --device
  bool allow_oversubscription = false;
  bool no_um_counters = false;
  bool no_link_measure = false;
  bool placement = false;
};

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) throw invalid_argument("cannot write '" + path + "'");
  out << text;
}

// The plot script travels with the source tree and the install; FERRY_PLOT_SCRIPT overrides.
std::filesystem::path plot_script() {
  if (const char* env = std::getenv("FERRY_PLOT_SCRIPT")) return env;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe");
  for (const auto& candidate : {exe.parent_path() / "../share/ferry/plot_bench.py",
                                std::filesystem::path(FERRY_SOURCE_DIR) / "scripts/plot_bench.py"})
    if (std::filesystem::exists(candidate)) return candidate;
  throw invalid_argument("--plot: cannot find plot_bench.py (set FERRY_PLOT_SCRIPT)");
}

// The GPUs of the run: --devices LIST, else the single --device.
std::vector<int> chosen_devices(const bench_flags& f, bool device_given) {
  if (f.devices.empty()) return {f.device};
  if (device_given) throw invalid_argument("give either --device or --devices, not both");
  return parse_device_set(f.devices, cuda_device_count());
}

// Described by the first GPU of the run (the link peak too); several GPUs are named in gpu_name.
bench::machine_info describe_machine(const device_caps& caps, const std::vector<int>& devices, bool measure) {
  bench::machine_info m;
  m.gpu_name = devices.size() > 1 ? fmt::format("{} (GPUs {})", caps.name, format_device_set(devices)) : caps.name;
  m.platform = std::string(to_string(classify(caps)));
  if (caps.pcie) m.pcie = fmt::format("Gen{} x{}", caps.pcie->current_generation, caps.pcie->current_width);
  FERRY_CUDA_TRY(cudaDriverGetVersion(&m.driver_version));
  FERRY_CUDA_TRY(cudaRuntimeGetVersion(&m.runtime_version));
  if (measure) {
    const auto link = measure_link_bandwidth_blocking(caps.ordinal);
    m.link_peak_h2d_gbps = link.h2d_gbps_best;
    m.link_peak_d2h_gbps = link.d2h_gbps_best;
  }
  return m;
}

// `--placement`: for every engine and size, the request with its data on each GPU of the set, run
// on each GPU of the set: what running where the data is saves.
void run_placement(const bench_flags& f, const std::vector<int>& devices, const std::vector<shape_binding>& shapes) {
  if (devices.size() < 2) throw invalid_argument("--placement needs two GPUs or more (--devices 0,1 or all)");
  std::vector<bench::placement_cost> results;
  for (const auto& engine : f.engines) {
    for (const auto& size : f.sizes) {
      const auto w = bench::make_workload({.engine = engine,
                                           .input_bytes = bench::parse_byte_size(size),
                                           .batch = f.batch,
                                           .preprocess = f.preprocess,
                                           .shapes = shapes,
                                           .devices = devices,
                                           .max_concurrency = 2});
      for (const int data : devices)
        for (const int run : devices) {
          std::cerr << fmt::format("  {} {} data on GPU {}, run on GPU {}...\r", w.label, size, data, run) << std::flush;
          results.push_back(bench::measure_placement_cost(w, data, run, f.iterations > 0 ? static_cast<int>(f.iterations) : 200));
        }
      if (engine.rfind("mlp", 0) == 0 || !f.preprocess.empty() || is_model_engine_spec(engine)) break;
    }
  }
  std::cerr << std::string(60, ' ') << '\r';
  std::cout << bench::render_placement_table(results);
  if (!f.json.empty()) write_file(f.json, bench::placement_costs_to_json(results).dump(2) + "\n");
}

void run_bench(const bench_flags& f, bool device_given, const std::string& command_line) {
  if (cuda_device_count() == 0) throw no_device(no_device_reason());  // no GPU: exit 2
  const std::vector<int> devices = chosen_devices(f, device_given);
  const device_caps caps = query_device(devices.front());
  const auto goal = f.objective == "throughput" ? bench::objective::throughput : bench::objective::latency;

  if (f.placement) {
    std::vector<shape_binding> shapes;
    for (const auto& s : f.shapes) shapes.push_back(bench::parse_shape(s));
    run_placement(f, devices, shapes);
    return;
  }

  bench::run_options options;
  options.devices = devices;
  options.inflight = f.inflight;
  options.clients = f.clients;
  options.graph = f.graph ? graph_mode::on : graph_mode::off;
  options.warmup = f.warmup;
  options.managed_policy = f.allow_oversubscription ? oversubscription::allow : oversubscription::refuse;
  if (f.iterations > 0) options.iterations = f.iterations;
  options.max_seconds = f.duration;
  // Latency stops once its median settles; throughput is requests over a window, and a short
  // window swings by ±10% (0.3 s of a 2-GPU run is ~600 requests), so it runs the whole duration.
  options.min_seconds = goal == bench::objective::throughput ? f.duration : std::min(0.3, f.duration);
  options.um_counters = !f.no_um_counters;
  options.writes = f.input_writes == "cached" ? bench::input_writes::cached : bench::input_writes::streaming;

  bench::bench_report report;
  report.date = utc_now();
  report.command = command_line;
  report.machine = describe_machine(caps, devices, !f.no_link_measure);

  std::vector<shape_binding> shapes;
  for (const auto& s : f.shapes) shapes.push_back(bench::parse_shape(s));
  const bool automatic = f.strategies == "auto";
  const auto strategies = automatic ? std::vector<strategy_kind>{} : parse_strategy_list(f.strategies);

  for (const auto& engine : f.engines) {
    for (const auto& size : f.sizes) {
      bench::workload_request request{.engine = engine,
                                      .input_bytes = bench::parse_byte_size(size),
                                      .batch = f.batch,
                                      .preprocess = f.preprocess,
                                      .shapes = shapes,
                                      .devices = devices,
                                      // +1: output checks run a reference session alongside
                                      .max_concurrency = f.inflight + 1};
      const auto w = bench::make_workload(request);
      if (automatic) {
        const auto pick = bench::choose_strategy(w, goal, options);
        std::cout << pick.explanation << '\n';
        report.results.push_back(bench::run_cell(w, pick.chosen, options));
        report.results.back().notes.push_back(pick.explanation);
      } else {
        for (auto k : strategies) {
          std::cerr << fmt::format("  {} {} {}...\r", w.label, size, to_string(k)) << std::flush;
          report.results.push_back(bench::run_cell(w, k, options));
        }
      }
      // mlp, images and model files are sized by batch, not bytes: one pass is the whole sweep.
      if (engine.rfind("mlp", 0) == 0 || !f.preprocess.empty() || is_model_engine_spec(engine)) break;
    }
  }
  std::cerr << std::string(60, ' ') << '\r';
  bench::decide_winner(report, goal, std::string(recommendation_for(classify(caps)).reasoning));

  std::cout << bench::render_table(report);
  if (!f.json.empty()) write_file(f.json, bench::to_json(report).dump(2) + "\n");
  if (!f.csv.empty()) write_file(f.csv, bench::render_csv(report));
  if (!f.md.empty()) write_file(f.md, bench::render_markdown(report));
  if (!f.plot.empty()) {
    const std::string json_path = f.json.empty() ? f.plot + ".json" : f.json;
    if (f.json.empty()) write_file(json_path, bench::to_json(report).dump(2) + "\n");
    const std::string cmd = fmt::format("python3 '{}' '{}' '{}'", plot_script().string(), json_path, f.plot);
    if (std::system(cmd.c_str()) != 0) throw error("--plot: '" + cmd + "' failed");
  }
}

}  // namespace

void add_bench_command(CLI::App& app, std::string command_line) {
  auto flags = std::make_shared<bench_flags>();
  auto* cmd = app.add_subcommand("bench", "measure transfer strategies on an engine (defaults: a compact matrix)");
  cmd->add_option("--engine", flags->engines,
                  "engine(s): touch, reduce, sparse:<fraction>, mlp:<layers>x<width>")->delimiter(',');
  cmd->add_option("--strategy", flags->strategies, "strategy list, 'all' or 'auto'");
  cmd->add_option("--size", flags->sizes, "input size(s) of touch/reduce/sparse, e.g. 0.6MB,19MB,64MB")->delimiter(',');
  cmd->add_option("--batch", flags->batch, "batch (mlp; images with --preprocess)")->check(CLI::PositiveNumber);
  cmd->add_option("--shape", flags->shapes, "NAME:D1xD2... concrete input shape (repeatable)");
  cmd->add_option("--preprocess", flags->preprocess, "GPU preprocessing in front of the engine: u8-normalize");
  cmd->add_option("--inflight", flags->inflight, "slots in flight")->check(CLI::Range(1, 64));
  cmd->add_option("--clients", flags->clients, "closed-loop client threads")->check(CLI::Range(1, 1024));
  cmd->add_option("--iterations", flags->iterations, "fixed number of requests per cell (default: until the median settles)");
  cmd->add_option("--duration", flags->duration, "at most this many seconds per cell (with --objective throughput: exactly this many)")->check(CLI::PositiveNumber);
  cmd->add_flag("--warmup,!--no-warmup", flags->warmup,
                "warm every slot up before measuring (default); --no-warmup measures a cold start");
  cmd->add_flag("--graph", flags->graph, "capture each slot's pipeline as a CUDA graph");
  cmd->add_option("--objective", flags->objective, "what the winner and auto optimise")
      ->check(CLI::IsMember({"latency", "throughput"}));
  cmd->add_option("--input-writes", flags->input_writes,
                  "how the CPU writes each request's fresh input: streaming (non-temporal stores, default) or cached")
      ->check(CLI::IsMember({"cached", "streaming"}));
  cmd->add_option("--json", flags->json, "write the JSON report here");
  cmd->add_option("--csv", flags->csv, "write the CSV report here");
  cmd->add_option("--md", flags->md, "write the markdown report here");
  cmd->add_option("--plot", flags->plot, "render latency/throughput plots here (.png or .svg)");
  auto* device_option = cmd->add_option("--device", flags->device, "GPU ordinal")->check(CLI::NonNegativeNumber);
  cmd->add_option("--devices", flags->devices,
                  "GPUs to spread requests over: 0,1 or all (one engine replica with --inflight slots on each; "
                  "requests go to the least-loaded GPU)");
  cmd->add_flag("--allow-oversubscription", flags->allow_oversubscription,
                "let managed buffers exceed free device memory (can stall a shared GPU)");
  cmd->add_flag("--no-um-counters", flags->no_um_counters, "do not collect CUPTI unified-memory counters");
  cmd->add_flag("--no-link-measure", flags->no_link_measure, "skip measuring the pinned link peak");
  cmd->add_flag("--placement", flags->placement,
                "instead of strategies: with --devices, what running where the data is saves (inputs and "
                "outputs on one GPU, the engine on each GPU; peer copies timed); --json writes its results");
  cmd->callback([flags, device_option, line = std::move(command_line)] {
    run_bench(*flags, device_option->count() > 0, line);
  });
}

}  // namespace ferry::cli
