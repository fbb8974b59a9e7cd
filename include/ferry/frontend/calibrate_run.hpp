// `ferry calibrate`'s run, apart from its flags: measures every strategy on this machine's GPUs and
// saves each GPU's profile, which `ferry info`, `ferry bench --strategy auto` and serve's "auto"
// then use. The CLI's calibrate and `ferry info --measure` call it, and the Python package's
// ferry.info(measure=True).
#pragma once

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ferry/bench/calibrate.hpp"

namespace ferry::frontend {

struct calibrate_options {
  bench::sweep_depth depth = bench::sweep_depth::standard;
  std::optional<int> device;                     // every GPU when absent
  std::optional<std::filesystem::path> profile;  // where to save; one GPU only
  std::FILE* summary = stdout;                   // `ferry info --measure` keeps stdout for its report
};

// Calibrates each chosen GPU and saves its profile; progress goes to stderr, one summary line per
// GPU (and its notes) to stdout. Returns the saved paths by ordinal order. Throws no_device
// without a GPU, invalid_argument for --profile with several GPUs.
std::vector<std::filesystem::path> run_calibrate(const calibrate_options& options);

}  // namespace ferry::frontend
