#include "ferry/bench/matrix.hpp"

#include <fmt/format.h>

#include "ferry/bench/advice_check.hpp"
#include "ferry/bench/workload_factory.hpp"
#include "ferry/builtin.hpp"
#include "ferry/byte_size.hpp"
#include "ferry/device_caps.hpp"
#include "ferry/error.hpp"
#include "ferry/model_engine.hpp"
#include "ferry/recommendation.hpp"

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
  // Built-in specs are checked here; model files when they load (their path and format).
  for (const auto& engine : request.engines)
    if (!is_model_engine_spec(engine)) validate_builtin_spec(engine);
  if (request.sizes.empty()) throw invalid_argument("no size given");
  for (const auto& size : request.sizes) (void)parse_byte_size(size);
  (void)parsed_shapes(request);
  if (request.strategies != "auto") (void)parse_strategy_list(request.strategies);
  if (request.batch < 1) throw invalid_argument("--batch must be at least 1");
}

bench_report run_matrix(const matrix_request& request, const run_options& options, const std::string& command_line,
                        const progress_function& progress) {
  validate(request);
  const device_caps caps = query_device(options.devices.front());
  bench_report report;
  report.date = utc_timestamp();
  report.command = command_line;
  report.machine = describe_machine(options.devices, request.measure_link);
  const auto shapes = parsed_shapes(request);
  const bool automatic = request.strategies == "auto";
  const auto strategies = automatic ? std::vector<strategy_kind>{} : parse_strategy_list(request.strategies);
  for (const auto& engine : request.engines) {
    for (const auto& size : request.sizes) {
      const workload w = make_workload({.engine = engine,
                                        .input_bytes = parse_byte_size(size),
                                        .batch = request.batch,
                                        .preprocess = request.preprocess,
                                        .shapes = shapes,
                                        .devices = options.devices,
                                        // + the reference session, the recipe and the floor
                                        .max_concurrency = options.session.inflight + 3,
                                        .backend_directories = request.backend_directories});
      if (automatic && request.profile) {
        if (progress) progress(fmt::format("{} {} auto (profile)", w.label, size));
        const choice pick = choose(traffic_of(w, options.devices.front()), caps, *request.profile,
                                   request.goal == objective::latency ? ferry::objective::latency
                                                                      : ferry::objective::throughput);
        report.results.push_back(run_cell(w, pick.strategy, options));
        report.results.back().notes.push_back(
            fmt::format("auto picked '{}' from this machine's profile, {}", to_string(pick.strategy), pick.reason));
      } else if (automatic) {
        if (progress) progress(fmt::format("{} {} auto", w.label, size));
        const auto pick = choose_strategy(w, request.goal, options);
        report.results.push_back(run_cell(w, pick.chosen, options));
        report.results.back().notes.push_back(pick.explanation);
        if (!request.profile_note.empty()) report.results.back().notes.push_back(request.profile_note);
      } else {
        const std::size_t first = report.results.size();
        for (const auto k : strategies) {
          if (progress) progress(fmt::format("{} {} {}", w.label, size, to_string(k)));
          report.results.push_back(run_cell(w, k, options));
        }
        if (request.profile && strategies.size() > 1) {
          // What `auto` would have picked from the profile, against the best of this run.
          const choice pick = choose(traffic_of(w, options.devices.front()), caps, *request.profile,
                                     request.goal == objective::latency ? ferry::objective::latency
                                                                        : ferry::objective::throughput);
          std::vector<const strategy_result*> group;
          for (std::size_t i = first; i < report.results.size(); ++i) group.push_back(&report.results[i]);
          report.advice_checks.push_back(check_advice(group, pick.strategy, request.goal));
        }
      }
      if (sized_by_batch(request, engine)) break;
    }
  }
  // The advice behind the verdict: this machine's measurements where it has a profile.
  const std::string advice =
      request.profile ? fmt::format("Measured on this machine's profile ({}, {}); `ferry info` shows its figures.",
                                    request.profile->date, request.profile->link)
                      : fmt::format("Platform rules, not measured on this machine: {}",
                                    recommendation_for(classify(caps)).reasoning);
  decide_winner(report, request.goal, advice);
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
                                    .backend_directories = request.backend_directories});
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
