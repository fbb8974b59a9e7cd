// ferry.bench's C++ side: ferry bench's flags (ferry/frontend/bench_flags.hpp, the one mapping from
// flags to the bench library's options, shared with the CLI) filled from Python keywords, the
// library's run, and its JSON report as text: Python reads it with json.loads, so the binding does
// not follow the C++ result type field by field.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "bindings.hpp"
#include "ferry/bench/matrix.hpp"
#include "ferry/bench/report.hpp"
#include "ferry/bench/result.hpp"
#include "ferry/core/error.hpp"
#include "ferry/frontend/bench_flags.hpp"

namespace nb = nanobind;

namespace ferry::python {
namespace {

template <typename T>
void take(const nb::dict& options, const char* key, T& field) {
  if (options.contains(key) && !options[key].is_none()) field = nb::cast<T>(options[key]);
}

// Every key is one of ferry bench's flags, spelled with underscores (python/ferry/_bench.py lists
// them); an unknown key is refused there before it gets here.
std::string run_bench(const nb::dict& options, const std::string& command_line) {
  frontend::bench_flags f;
  take(options, "engine", f.matrix.engines);
  take(options, "size", f.matrix.sizes);
  take(options, "batch", f.matrix.batch);
  take(options, "shape", f.matrix.shapes);
  take(options, "preprocess", f.matrix.preprocess);
  take(options, "strategy", f.strategies);
  take(options, "objective", f.objective);
  take(options, "inflight", f.inflight);
  take(options, "clients", f.clients);
  take(options, "iterations", f.iterations);
  take(options, "duration", f.duration);
  take(options, "max_noise", f.max_noise_percent);
  take(options, "min_samples", f.min_samples);
  take(options, "max_time", f.max_time);
  take(options, "trials", f.trials);
  take(options, "max_trials", f.max_trials);
  take(options, "schedule", f.schedule);
  take(options, "memory_margin", f.memory_margin_percent);
  take(options, "slowdown", f.slowdown_percent);
  take(options, "warmup", f.warmup);
  take(options, "graph", f.graph);
  take(options, "recipes", f.recipes);
  take(options, "input_writes", f.input_writes);
  take(options, "input_data", f.input_data);
  take(options, "index_checks", f.index_checks);
  take(options, "index_bound", f.index_bounds);
  take(options, "device", f.device);
  take(options, "devices", f.devices);
  take(options, "allow_oversubscription", f.allow_oversubscription);
  take(options, "no_um_counters", f.no_um_counters);
  take(options, "no_l2_flush", f.no_l2_flush);
  take(options, "no_link_measure", f.no_link_measure);
  take(options, "profile", f.profile);
  take(options, "backend_directory", f.backend_directory);
  const bool device_given = options.contains("device") && !options["device"].is_none();

  nb::gil_scoped_release unlocked;  // a run takes seconds to minutes
  const bench::run_options run = frontend::prepare_bench(f, device_given);
  const bench::bench_report report = bench::run_matrix(f.matrix, run, command_line);
  return bench::to_json(report).dump();
}

// Every number of a cell as to_pandas names its column ("noise", "latency_us.median"), walked from
// the result's field tables: a frame of a report that predates a figure still gets its column.
template <class T>
void add_figure_columns(std::vector<std::string>& out, const std::string& prefix) {
  bench::for_each_field<T>([&](const auto& f) {
    using value = bench::field_value_t<decltype(f)>;
    const std::string key = prefix + std::string(f.key);
    if constexpr (bench::described<value>) {
      add_figure_columns<value>(out, key + ".");
    } else if constexpr (std::is_arithmetic_v<value> && !std::is_same_v<value, bool>) {
      out.push_back(key);
    }
  });
}

std::vector<std::string> report_figure_columns() {
  std::vector<std::string> columns;
  add_figure_columns<bench::strategy_result>(columns, "");
  return columns;
}

}  // namespace

void bind_bench(nb::module_& m) {
  m.def("_run_bench", &run_bench, nb::arg("options"), nb::arg("command_line"),
        "Runs ferry bench's matrix with these flags; returns the JSON report as text.");
  m.def("_report_figure_columns", &report_figure_columns,
        "The numeric figures of a report's cell, as to_pandas names their columns.");
}

}  // namespace ferry::python
