#include "ferry/bench/matrix.hpp"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "bench/measure/cell_result.hpp"
#include "bench/measure/cell_trials.hpp"
#include "bench/measure/inflight_search.hpp"
#include "bench/runs/auto_strategy.hpp"
#include "bench/statistics/advice_check.hpp"
#include "bench/statistics/verdict.hpp"
#include "core/scoped_device.hpp"
#include "ferry/bench/trials.hpp"
#include "ferry/bench/workload_factory.hpp"
#include "ferry/core/byte_size.hpp"
#include "ferry/core/device_fault.hpp"
#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/engines/builtin.hpp"
#include "ferry/engines/model_engine.hpp"
#include "ferry/memory/recommendation.hpp"

namespace ferry::bench {
namespace {

std::vector<shape_binding> parsed_shapes(const matrix_request& request) {
  std::vector<shape_binding> shapes;
  for (const auto& s : request.shapes) shapes.push_back(parse_shape(s));
  return shapes;
}

// mlp, images and model files are sized by batch, not bytes: their first size is the whole sweep.
bool sized_by_batch(const matrix_request& request, const std::string& engine) {
  return engine.rfind("mlp", 0) == 0 || !request.preprocess.empty() || is_model_engine_spec(engine);
}

}  // namespace

void validate(const matrix_request& request) {
  if (request.engines.empty()) throw invalid_argument("no engine given");
  // Built-in specs are checked here, and that a model file exists; its format when it loads.
  for (const auto& engine : request.engines) {
    if (is_model_engine_spec(engine)) {
      check_model_engine_spec(engine);
    } else {
      validate_builtin_spec(engine);
    }
  }
  if (request.sizes.empty()) throw invalid_argument("no size given");
  for (const auto& size : request.sizes) (void)parse_byte_size(size);
  (void)parsed_shapes(request);
  if (request.batch < 1) throw invalid_argument("--batch must be at least 1");
  if (!request.index_bounds.empty() && std::none_of(request.engines.begin(), request.engines.end(),
                                                    [](const auto& e) { return is_model_engine_spec(e); }))
    throw invalid_argument("--index-bound bounds a model file's input; built-in workloads declare their own");
}

strategy_selection parse_strategy_selection(std::string_view text) {
  if (text == "auto") return {.automatic = true, .kinds = {}};
  try {
    return {.automatic = false, .kinds = parse_strategy_list(text)};
  } catch (const invalid_argument& e) {
    // The strategies' names come with the error; the two words a selection takes besides them too.
    throw invalid_argument(
        fmt::format("--strategy '{}': {}; or 'all' (every strategy) or 'auto' (the one this "
                    "GPU's profile picks)",
                    text, e.what()));
  }
}

namespace {

// A cell group (one engine at one size) as planned before any trial runs: its workload, kept loaded
// for the whole run so its cells' trials can be spread over it, and its cells.
struct planned_group {
  std::string engine;     // as given (--engine)
  std::string size;       // as given (--size)
  bool by_batch = false;  // mlp, images, model files: sized by --batch, the size is not theirs
  std::unique_ptr<workload> loaded;
  std::optional<cell_failure> failure;  // the workload, or the auto pick, could not be made
  std::vector<strategy_kind> strategies;
  std::string pick_note;                 // --strategy auto: what picked the strategy, and how
  std::vector<std::string> input_lines;  // what each input is given (input_data::describe)
  std::vector<std::unique_ptr<cell_trials>> cells;
};

// What each input of the workload is given, one line each; throws invalid_argument for data that
// cannot feed it (a file lacking an input, random ids with no bound), before any cell runs.
std::vector<std::string> describe_inputs(const workload& w, const run_options& options) {
  const int device = options.devices.front();
  std::unique_ptr<engine> eng;
  {
    core::scoped_device on_device(device);
    eng = w.make_engine(device);
  }
  const auto io = eng->resolve(w.shapes);
  const input_data bound = options.data.bound_to(io);
  std::vector<std::string> lines;
  for (const auto& spec : io) {
    if (spec.role != tensor_role::input) continue;
    std::string line = bound.describe(spec);
    if (spec.index_bound && options.session.index_checks == index_check::on) line += ", checked on the GPU";
    lines.push_back(std::move(line));
  }
  return lines;
}

// The group's cells, or why it has none: the workload is made here (a model file loads), and with
// --strategy auto the pick is made here too, so every cell of the run exists before the first
// trial. Bad input throws (it is named before anything runs); any other error becomes the group's
// failure and the run goes on.
void plan_group(planned_group& g, const matrix_request& request, const run_options& options,
                const std::vector<shape_binding>& shapes, const device_caps& caps, bench_clock::time_point run_start,
                const progress_function& progress) {
  const bool automatic = request.strategies.automatic;
  try {
    g.loaded = std::make_unique<workload>(make_workload({.engine = g.engine,
                                                         .input_bytes = parse_byte_size(g.size),
                                                         .batch = request.batch,
                                                         .preprocess = request.preprocess,
                                                         .shapes = shapes,
                                                         .devices = options.devices,
                                                         // Model files make one runner per context that may
                                                         // run at once: the slots a cell may use, and one for
                                                         // the reference session's checks.
                                                         .max_concurrency = max_slots(options) + 1,
                                                         .backend_directories = request.backend_directories,
                                                         .index_bounds = request.index_bounds}));
    const workload& w = *g.loaded;
    g.input_lines = describe_inputs(w, options);
    if (automatic && request.profile) {
      const choice pick = choose(traffic_of(w, options.devices.front()), caps, *request.profile, request.goal);
      g.strategies = {pick.strategy};
      g.pick_note =
          fmt::format("auto picked '{}' from this machine's profile, {}", to_string(pick.strategy), describe(pick));
    } else if (automatic) {
      if (progress) progress(fmt::format("{} {}auto: calibrating", w.label, g.by_batch ? "" : g.size + " "));
      const auto pick = calibrate_strategy(w, request.goal, options);
      g.strategies = {pick.chosen};
      g.pick_note = pick.explanation;
    } else {
      g.strategies = request.strategies.kinds;
    }
  } catch (const invalid_argument&) {
    throw;
  } catch (...) {
    g.failure = describe_failure(std::current_exception());
    if (!automatic) g.strategies = request.strategies.kinds;
    return;
  }
  for (const auto k : g.strategies)
    g.cells.push_back(std::make_unique<cell_trials>(
        *g.loaded, k, options, options.schedule, run_start,
        fmt::format("{} {}{}", g.loaded->label, g.by_batch ? "" : g.size + " ", to_string(k))));
}

// A group that could not run: one failed row per strategy asked for ("auto" for a pick that
// failed), so every report format carries the reason.
void report_failed_group(const planned_group& g, const matrix_request& request, const run_options& options,
                         bench_report& report) {
  std::vector<std::optional<strategy_kind>> asked(g.strategies.begin(), g.strategies.end());
  if (asked.empty()) asked.emplace_back(std::nullopt);
  for (const auto& strategy : asked) {
    strategy_result r;
    r.identity = cell_identity(
        g.loaded ? g.loaded->label : (request.preprocess.empty() ? "" : request.preprocess + "+") + g.engine, strategy,
        options, options.schedule);
    r.identity.input_bytes = g.by_batch ? 0 : parse_byte_size(g.size);
    r.verdict.not_measured(g.failure->reason, g.failure->failed);
    report.results.push_back(std::move(r));
  }
}

// The fault as the report and the CLI say it: what happened, in which cell, and what its inputs
// were given (a bad id in a file is the usual cause).
std::string describe_fault(const device_fault_record& fault, const std::vector<strategy_result>& results) {
  const auto hit = std::find_if(results.begin(), results.end(), [&](const strategy_result& r) {
    return r.verdict.failed() && r.verdict.reason() == fault.what;
  });
  if (hit == results.end()) return fault.what;
  std::string inputs;
  for (const auto& line : hit->identity.input_data) inputs += (inputs.empty() ? "" : "; ") + line;
  return fmt::format("{}, in {} {}{}", fault.what, hit->identity.engine, strategy_name(hit->identity.strategy),
                     inputs.empty() ? "" : " (inputs: " + inputs + ")");
}

}  // namespace

std::size_t count_failed(const bench_report& report) {
  return static_cast<std::size_t>(std::count_if(report.results.begin(), report.results.end(),
                                                [](const strategy_result& r) { return r.verdict.failed(); }));
}

bench_report run_matrix(const matrix_request& request, const run_options& given, const std::string& command_line,
                        const progress_function& progress) {
  validate(request);
  // The devices are queried once, here: every cell and pick uses these.
  run_options options = given;
  options.capabilities.clear();
  for (const int ordinal : options.devices) options.capabilities.push_back(query_device(ordinal));
  const device_caps& caps = options.capabilities.front();
  bench_report report;
  report.date = utc_timestamp();
  report.command = command_line;
  report.machine = describe_machine(options.devices, request.measure_link);
  const auto shapes = parsed_shapes(request);
  const auto run_start = bench_clock::now();

  // Plan every group first, then run the trials of all their cells in rounds (or one cell after
  // another with --schedule sequential): a cell's trials are then spread over the whole run.
  std::vector<planned_group> groups;
  for (const auto& engine : request.engines) {
    for (const auto& size : request.sizes) {
      const bool by_batch = sized_by_batch(request, engine);
      planned_group& g = groups.emplace_back();
      g.engine = engine;
      g.size = size;
      g.by_batch = by_batch;
      if (device_faulted()) {
        // The GPU was lost planning a group before (a model's probe run): nothing more can run.
        g.failure = cell_failure{.reason = "not run: the GPU faulted earlier in the run", .failed = true};
        g.strategies = request.strategies.kinds;
      } else {
        plan_group(g, request, options, shapes, caps, run_start, progress);
      }
      if (by_batch) break;
    }
  }
  std::vector<trial_cell*> cells;
  for (auto& g : groups)
    for (auto& c : g.cells) cells.push_back(c.get());
  if (!device_faulted()) {
    try {
      run_trials(cells, options.schedule, progress);
    } catch (const device_fault&) {
      // Every cell has stopped; the report below holds what was measured before the fault.
    }
  }

  for (const auto& g : groups) {
    if (g.failure) {
      report_failed_group(g, request, options, report);
      continue;
    }
    const std::size_t first = report.results.size();
    for (const auto& c : g.cells) {
      report.results.push_back(c->finish());
      report.results.back().identity.input_data = g.input_lines;
      if (!g.pick_note.empty()) report.results.back().diagnostics.notes.push_back(g.pick_note);
      if (!request.profile_note.empty() && request.strategies.automatic && !request.profile)
        report.results.back().diagnostics.notes.push_back(request.profile_note);
    }
    if (request.profile && g.strategies.size() > 1 && !device_faulted()) {
      // What `auto` would have picked from the profile, against the best of this run.
      try {
        const choice pick =
            choose(traffic_of(*g.loaded, options.devices.front()), caps, *request.profile, request.goal);
        std::vector<const strategy_result*> group;
        for (std::size_t i = first; i < report.results.size(); ++i) group.push_back(&report.results[i]);
        report.advice_checks.push_back(check_advice(group, pick.strategy, request.goal));
      } catch (const std::exception&) {
        // No pick to check (the engine could not be made again): the group's rows say why.
      }
    }
  }
  // The advice behind the verdict: this machine's measurements where it has a profile.
  const std::string advice =
      request.profile ? fmt::format("Measured on this machine's profile ({}, {}); `ferry info` shows its figures.",
                                    request.profile->date, request.profile->link)
                      : fmt::format("Platform rules, not measured on this machine: {}",
                                    recommendation_for(classify(caps)).reasoning);
  if (const auto fault = first_device_fault()) report.device_fault = describe_fault(*fault, report.results);
  report.objective = to_string(request.goal);
  verdict decided = decide_winner(report.results, request.goal, advice);
  report.winner = std::move(decided.winner);
  report.recommendation = std::move(decided.recommendation);
  return report;
}

std::vector<placement_cost> run_placement_matrix(const matrix_request& request, const std::vector<int>& devices,
                                                 int iterations, const progress_function& progress) {
  if (devices.size() < 2) throw invalid_argument("--placement needs two GPUs or more (--devices 0,1 or all)");
  validate(request);
  const auto shapes = parsed_shapes(request);
  std::vector<placement_cost> results;
  for (const auto& engine : request.engines) {
    for (const auto& size : request.sizes) {
      const auto w = make_workload({.engine = engine,
                                    .input_bytes = parse_byte_size(size),
                                    .batch = request.batch,
                                    .preprocess = request.preprocess,
                                    .shapes = shapes,
                                    .devices = devices,
                                    .max_concurrency = 2,
                                    .backend_directories = request.backend_directories,
                                    .index_bounds = request.index_bounds});
      for (const int data : devices)
        for (const int run : devices) {
          if (progress) progress(fmt::format("{} {} data on GPU {}, run on GPU {}", w.label, size, data, run));
          results.push_back(measure_placement_cost(w, data, run, iterations));
        }
      if (sized_by_batch(request, engine)) break;
    }
  }
  return results;
}

}  // namespace ferry::bench
