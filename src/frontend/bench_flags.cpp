#include "ferry/frontend/bench_flags.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/device/device_diagnosis.hpp"
#include "ferry/device/device_set.hpp"
#include "ferry/engines/backend.hpp"
#include "ferry/frontend/plot.hpp"
#include "ferry/memory/profile.hpp"

namespace ferry::frontend {
namespace {

// A report path that cannot be written is named before the run, not after minutes of measuring.
void check_writable(const std::string& path, const char* flag) {
  if (path.empty()) return;
  const std::filesystem::path file(path);
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    throw invalid_argument(std::string(flag) + " '" + path + "' is a folder; give a file name");
  const auto folder = file.parent_path().empty() ? std::filesystem::path(".") : file.parent_path();
  if (!std::filesystem::is_directory(folder, ec))
    throw invalid_argument(std::string(flag) + " '" + path + "': the folder '" + folder.string() + "' does not exist");
  if (::access(folder.c_str(), W_OK) != 0)
    throw invalid_argument(std::string(flag) + " '" + path + "': the folder '" + folder.string() + "' is not writable");
}

// The GPUs of the run: --devices LIST, else the single --device.
std::vector<int> chosen_devices(const bench_flags& f, bool device_given) {
  if (f.devices.empty()) return {f.device};
  if (device_given) throw invalid_argument("give either --device or --devices, not both");
  return parse_device_set(f.devices, cuda_device_count());
}

// Everything checked before a GPU is touched, so a typo is named even on a machine without one.
bench::run_options run_options_from(bench_flags& f) {
  f.matrix.goal = f.objective == "throughput" ? ferry::objective::throughput : ferry::objective::latency;
  f.matrix.strategies = bench::parse_strategy_selection(f.strategies);
  bench::validate(f.matrix);
  bench::run_options options;
  const std::string inflight = f.inflight.empty() ? (f.objective == "throughput" ? "auto" : "1") : f.inflight;
  if (inflight == "auto") {
    options.inflight_auto = true;
  } else {
    try {
      std::size_t used = 0;
      options.session.inflight = std::stoi(inflight, &used);
      if (used != inflight.size() || options.session.inflight < 1 || options.session.inflight > 64) throw 0;
    } catch (...) {
      throw invalid_argument("--inflight must be a count from 1 to 64 or 'auto', not '" + inflight + "'");
    }
  }
  options.clients = f.clients;
  options.session.graph = f.graph ? graph_mode::on : graph_mode::off;
  options.session.managed_policy = f.allow_oversubscription ? oversubscription::allow : oversubscription::refuse;
  options.warmup = f.warmup;
  if (f.iterations > 0) options.iterations = f.iterations;
  if (f.max_trials < f.trials)
    throw invalid_argument("--max-trials (" + std::to_string(f.max_trials) + ") must be at least --trials (" +
                           std::to_string(f.trials) + ")");
  options.limits = {.max_noise = f.max_noise_percent / 100,
                    .min_samples = f.min_samples,
                    .min_seconds = std::min(0.1, f.max_time),
                    .max_seconds = f.max_time,
                    .min_trials = f.trials,
                    .max_trials = f.max_trials};
  options.schedule =
      f.schedule == "sequential" ? bench::trial_schedule::sequential : bench::trial_schedule::interleaved;
  options.memory_margin = f.memory_margin_percent / 100;
  options.slowdown = f.slowdown_percent / 100;
  // Throughput is requests over a window; the window, not the latency's noise, ends the cell.
  if (f.matrix.goal == ferry::objective::throughput) options.window_seconds = f.duration;
  options.um_counters = !f.no_um_counters;
  options.l2_flush = !f.no_l2_flush;
  options.recipes = f.recipes;
  options.writes = f.input_writes == "cached" ? bench::input_writes::cached : bench::input_writes::streaming;
  options.data = input_data::parse(f.input_data);  // a file is read now: a bad one is named before any GPU
  options.session.index_checks = f.index_checks ? index_check::on : index_check::off;
  f.matrix.index_bounds.clear();
  for (const auto& b : f.index_bounds) f.matrix.index_bounds.push_back(parse_index_bound(b));
  f.matrix.measure_link = !f.no_link_measure;
  f.matrix.backend_directories = backend_directories(f.backend_directory);
  check_writable(f.json, "--json");
  check_writable(f.csv, "--csv");
  check_writable(f.md, "--md");
  check_writable(f.plot, "--plot");
  if (!f.plot.empty()) check_plot_prerequisites(f.plot);
  return options;
}

}  // namespace

bench::run_options prepare_bench(bench_flags& f, bool device_given) {
  bench::run_options options = run_options_from(f);
  if (cuda_device_count() == 0) throw no_device(no_device_reason());  // no GPU: exit 3
  options.devices = chosen_devices(f, device_given);
  for (const int d : options.devices) require_code_for(query_device(d));  // before any cell, in one line
  if (f.placement) return options;

  const bool automatic = f.matrix.strategies.automatic;
  if (automatic || f.matrix.strategies.kinds.size() > 1) {
    // auto starts from what was measured on this GPU; without a usable profile it calibrates on the
    // workload as before, and the report says why. Several strategies with a profile: the report
    // checks the profile's pick against the best of the run.
    const device_caps caps = query_device(options.devices.front());
    const auto found =
        load_profile(f.profile.empty() ? default_profile_path(caps) : std::filesystem::path(f.profile), caps);
    if (found.profile) {
      f.matrix.profile = found.profile;
    } else {
      if (automatic) f.matrix.profile_note = found.message + "; auto calibrated on the workload instead";
      if (found.status != profile_status::missing || !f.profile.empty())
        std::cerr << "ferry bench: " << found.message << '\n';
    }
  }
  return options;
}

}  // namespace ferry::frontend
