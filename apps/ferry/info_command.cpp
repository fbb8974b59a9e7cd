// `ferry info`: what each GPU can do, which strategies work on it (and why not), what was
// measured on this machine (its profile) or else the platform rules, and optionally the measured
// pinned link peak, and the engine backends found (also without a GPU). The record is
// ferry::frontend's info_record, shared with the Python package; its printing and flags are here.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "device_option.hpp"
#include "engine_io.hpp"
#include "ferry/core/error.hpp"
#include "ferry/engines/backend.hpp"
#include "ferry/frontend/info_record.hpp"
#include "ferry/info/info_report.hpp"

namespace ferry::cli {
namespace {

enum class info_format { text, json };

std::string backends_text(const std::vector<backend_info>& backends,
                          const std::vector<std::filesystem::path>& directories) {
  std::string folders;
  for (const auto& d : directories) folders += (folders.empty() ? "" : ", ") + d.string();
  std::string text = fmt::format("\nBackends (model specs NAME:PATH; searched in {}):\n", folders);
  if (backends.empty()) text += "  none found\n";
  for (const auto& b : backends)
    text += b.problem.empty() ? fmt::format("  {:<8} {} (API {}{}), {}\n", b.name, b.version, b.api_version,
                                            b.computes_on_host ? ", also on the CPU" : "", b.file.string())
                              : fmt::format("  {:<8} unusable: {}\n", b.name, b.problem);
  return text;
}

// Prints the record (frontend::info_record: the devices, their profiles, with --measure a quick
// calibration and the links measured) to stdout in `format`. Throws ferry::no_device when there is
// no GPU, after printing what the record says.
void run_info(const frontend::info_options& options, info_format format) {
  const nlohmann::json info = frontend::info_record(options);
  // Without a GPU, --json still prints the record that says so and the text lists the backends;
  // the exit code stays 3 and stderr carries the usual line.
  const bool no_gpu = info.contains("no_device_reason");
  if (format == info_format::json) {
    fmt::print("{}\n", info.dump(2));
  } else {
    std::string missing_code;
    for (const auto& device : info["devices"])
      if (device.contains("missing_code"))
        missing_code += fmt::format("\nNo code for this GPU: {}\n", device["missing_code"].get<std::string>());
    const auto directories = backend_directories(options.backend_directory);
    fmt::print("{}{}{}", no_gpu ? std::string{} : render_info_text(info), missing_code,
               backends_text(list_backends(directories), directories));
  }
  std::fflush(stdout);
  if (no_gpu) throw no_device(info["no_device_reason"].get<std::string>());
}

}  // namespace

void add_info_command(CLI::App& app) {
  // Shared with the callback, which runs after parsing has filled these in.
  struct parsed {
    bool measure = false;
    bool json = false;
    int device = -1;
    std::string profile;
    std::string backend_directory;
    std::string engine;
    CLI::Option* device_option = nullptr;
  };
  auto flags = std::make_shared<parsed>();

  CLI::App* info =
      app.add_subcommand("info", "show each GPU's capabilities, which strategies work (or why not), what to use");
  info->add_flag("--measure", flags->measure,
                 "calibrate this machine first (`ferry calibrate --quick`, saving the profile), measure the "
                 "pinned H2D/D2H link peak and, with 2+ GPUs, the peer copy bandwidth of every pair both ways");
  info->add_option("--profile", flags->profile,
                   "read (and with --measure write) this profile instead of "
                   "$XDG_CACHE_HOME/ferry/profiles/<GPU UUID>.json");
  info->add_flag("--json", flags->json, "print JSON instead of text");
  info->add_option("--engine", flags->engine,
                   "show this engine's inputs and outputs instead (a built-in or BACKEND:PATH), with each integer "
                   "input's index bound or that it has none");
  info->add_option("--backend-directory", flags->backend_directory,
                   "folder searched first for backends (before FERRY_BACKEND_PATH and the folder beside ferry)");
  flags->device_option = add_device_option(*info, flags->device, "report only this GPU", "every GPU");

  info->callback([flags] {
    if (!flags->engine.empty()) {
      print_engine_io(flags->engine, flags->backend_directory, flags->json);
      return;
    }
    frontend::info_options options;
    options.link = flags->measure ? frontend::link_measurement::measure : frontend::link_measurement::skip;
    if (flags->device_option->count() > 0) options.device = flags->device;
    if (!flags->profile.empty()) options.profile = flags->profile;
    options.backend_directory = flags->backend_directory;
    run_info(options, flags->json ? info_format::json : info_format::text);
  });
}

}  // namespace ferry::cli
