// `ferry calibrate`: a short sweep of every strategy on this machine, kept as its profile
// (ferry/memory/profile.hpp), so advice quotes this machine's figures.
//
// Each use is a built-in workload run through the bench machinery (run_cell: warm-up, fresh
// inputs, outputs checked against the reference): the input read once is `reduce`, the input
// re-read is `reduce:4`, the output read by the CPU is `touch` (an output as large as its input;
// ferry::choose subtracts the read-once input). The in-flight depth is search_inflight_depth's search.
#pragma once

#include <string>
#include <vector>

#include "ferry/bench/matrix.hpp"
#include "ferry/memory/profile.hpp"

namespace ferry::bench {

enum class sweep_depth {
  quick,     // 64 KiB, 1 and 16 MiB: a first profile in about ten seconds, short of the L2 cache's size
  standard,  // 64 KiB, 1, 16 and 64 MiB (the default, under 30 s on the H200 host)
  thorough,  // 64 KiB to 256 MiB in 7 sizes, each until its median is known within 2%, depths at 3 sizes
};

[[nodiscard]] std::string_view to_string(sweep_depth depth) noexcept;

// The request sizes of a sweep, 64 KiB to 64 MiB (16 MiB quick, 256 MiB thorough). Beyond the largest size the
// profile extrapolates from its last two (ferry::estimate_us): past the GPU's L2 cache (50 MB on
// an H200) a request's cost grows in proportion to its bytes.
[[nodiscard]] std::vector<std::size_t> sweep_sizes(sweep_depth depth);

struct calibration_run {
  device_profile profile;
  std::vector<std::string> notes;  // sizes left out (memory), failed depth searches, ...
  double seconds = 0;
};

// Sweeps GPU `device` and returns its profile (not saved: save_profile). Sizes that do not fit in
// the device's free memory (with the reference session's copy) are left out, and managed memory is
// never requested beyond it. Throws no_device without a GPU.
[[nodiscard]] calibration_run calibrate(int device, sweep_depth depth, const progress_function& progress = {});

}  // namespace ferry::bench
