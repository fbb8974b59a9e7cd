// `ferry bench`'s flags as plain data and what they become: the one mapping from flags to the
// library's matrix_request and run_options, shared by the CLI (apps/ferry/bench_command.cpp) and the
// Python package's ferry.bench (python/src/bench.cpp), so both run the same cells for the same options.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ferry/bench/matrix.hpp"
#include "ferry/bench/run_options.hpp"

namespace ferry::frontend {

struct bench_flags {
  bench::matrix_request matrix;
  std::string strategies = "all";  // --strategy as given; parsed once into matrix.strategies
  std::string objective = "latency";
  std::string inflight;  // a count or "auto"; empty: 1 for latency, auto for throughput
  int clients = 1;
  std::size_t iterations = 0;
  double duration = 1.0;
  double max_noise_percent = 1.0;
  std::size_t min_samples = 40;
  double max_time = 4.0;
  std::size_t trials = 3;
  std::size_t max_trials = 6;
  std::string schedule = "interleaved";
  double memory_margin_percent = 10;
  double slowdown_percent = 0;
  bool warmup = true;
  bool graph = false;
  bool recipes = true;
  std::string input_writes = "streaming";
  std::string input_data = "auto";        // --input-data: auto, zero, random or a .json/.npz file
  bool index_checks = true;               // --no-index-checks turns the GPU check of index inputs off
  std::vector<std::string> index_bounds;  // --index-bound INPUT=N, for model files that do not say
  std::string json, csv, md, plot;
  int device = 0;
  std::string devices;  // --devices; empty: just --device
  bool allow_oversubscription = false;
  bool no_um_counters = false;
  bool no_l2_flush = false;
  bool no_link_measure = false;
  bool placement = false;
  std::string profile;            // --profile; empty: the first GPU's default cache file
  std::string backend_directory;  // --backend-directory: searched first for model files' backends
};

// Checks every flag (before a GPU is touched, so a typo is named even on a machine without
// one), then the machine: no GPU throws no_device (the cause in one line), a GPU this build has no
// code for unsupported; loads the GPU's profile where --strategy auto or several strategies use it
// (a problem with it goes to stderr, as the CLI prints it). Returns the run's options, its devices
// set; fills f.matrix's goal, link measurement, backend folders and profile.
[[nodiscard]] bench::run_options prepare_bench(bench_flags& f, bool device_given);

}  // namespace ferry::frontend
