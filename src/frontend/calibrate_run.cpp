#include "ferry/frontend/calibrate_run.hpp"

#include <unistd.h>

#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/device/device_diagnosis.hpp"
#include "ferry/memory/profile.hpp"

namespace ferry::frontend {

std::vector<std::filesystem::path> run_calibrate(const calibrate_options& options) {
  if (cuda_device_count() == 0) throw no_device(no_device_reason());
  const std::vector<device_caps> devices =
      options.device ? std::vector{query_device(*options.device)} : query_all_devices();
  if (options.profile && devices.size() > 1)
    throw invalid_argument("--profile names one file: give --device too on a machine with several GPUs");
  for (const auto& caps : devices) require_code_for(caps);
  std::vector<std::filesystem::path> saved;
  for (const auto& caps : devices) {
    const auto path = options.profile ? *options.profile : default_profile_path(caps);
    // On a terminal one line, rewritten; into a file or pipe one line per cell, with the time
    // since the sweep began, so a log says where the seconds went.
    const bool terminal = isatty(STDERR_FILENO) != 0;
    const auto began = std::chrono::steady_clock::now();
    const auto progress = [terminal, began](const std::string& line) {
      if (terminal) {
        std::cerr << "  " << line << "...                    \r" << std::flush;
        return;
      }
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      std::cerr << fmt::format("  [{:6.1f} s] {}\n", seconds, line) << std::flush;
    };
    const bench::calibration_run run = bench::calibrate(caps.ordinal, options.depth, progress);
    if (terminal) std::cerr << std::string(72, ' ') << '\r' << std::flush;
    save_profile(run.profile, path);
    std::size_t measured = 0;
    std::size_t refused = 0;
    for (const auto& c : run.profile.curves) (c.refused.empty() ? measured : refused) += 1;
    fmt::print(options.summary,
               "GPU {} ({}, {}): {} sweep in {:.1f} s, {} curves measured, {} refused; profile saved to {}\n",
               caps.ordinal, caps.name, run.profile.link, to_string(options.depth), run.seconds, measured, refused,
               path.string());
    for (const auto& note : run.notes) fmt::print(options.summary, "  note: {}\n", note);
    std::fflush(options.summary);
    saved.push_back(path);
  }
  return saved;
}

}  // namespace ferry::frontend
