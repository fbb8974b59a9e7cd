// The ferry command-line tool: parses the command line and hands over to a subcommand.
//
// Error policy: whatever goes wrong reaches the user as one line on stderr, prefixed "ferry: ",
// and a non-zero exit code; never an abort or an uncaught exception. One exit code per class:
//   0  done (also `ferry`, `ferry help`, --help and --version, which print and stop)
//   1  it failed while running (a CUDA call, a port in use, a benchmark cell, a write)
//   2  what was asked is wrong: a flag, a value, a file (CLI11's parse errors, invalid_argument); a
//      mistyped flag or command is named with the nearest known one (unknown_option.hpp)
//   3  this machine cannot do it: no usable GPU, no code for its GPU, a strategy or backend it lacks
//   4  the GPU faulted: a sticky CUDA error (a device-side assert, an illegal address) lost its
//      context; what was measured before is written, and the process must restart to use it
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "ferry/core/error.hpp"
#include "ferry/device/device_diagnosis.hpp"
#include "ferry/engines/backend_api.h"
#include "help_formatter.hpp"
#include "unknown_option.hpp"

namespace {

constexpr int exit_runtime = 1;
constexpr int exit_usage = 2;
constexpr int exit_platform = 3;
constexpr int exit_device_fault = 4;

int report(const char* message, int code) {
  std::string line = message;
  std::replace(line.begin(), line.end(), '\n', ' ');  // one line, whatever the message holds
  std::fprintf(stderr, "ferry: %s\n", line.c_str());
  return code;
}

std::string version_text() {
  return fmt::format("ferry {}\nCUDA runtime {}.{}, device code for {}\nbackend API {} (loads backends of {} to {})",
                     FERRY_VERSION, CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10,
                     ferry::built_cuda_architectures(), FERRY_BACKEND_API_VERSION, FERRY_BACKEND_API_OLDEST_VERSION,
                     FERRY_BACKEND_API_VERSION);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "ferry: moves inference inputs and outputs between host and GPU at the lowest "
      "cost the platform allows",
      "ferry"};
  app.formatter(std::make_shared<ferry::cli::help_formatter>());  // before the subcommands: they copy it
  app.set_version_flag("--version", version_text());
  app.footer(
      "Exit codes: 0 done, 1 failed while running, 2 a wrong flag, value or file, 3 this machine cannot "
      "do it (no usable GPU, a strategy or backend it lacks), 4 the GPU faulted (a sticky CUDA error: "
      "restart the process).");
  // `ferry help` is --help, as git and docker have it; `ferry` alone prints the same, and
  // `ferry help COMMAND...` is `ferry COMMAND... --help`.
  auto* help = app.add_subcommand("help", "show this help; `ferry help COMMAND` shows the command's");
  app.require_subcommand(0, 1);

  ferry::cli::add_info_command(app);
  ferry::cli::add_calibrate_command(app);
  std::string command_line = "ferry";
  for (int i = 1; i < argc; ++i) command_line += std::string(" ") + argv[i];
  ferry::cli::add_bench_command(app, command_line);
#ifdef FERRY_HAVE_SERVE
  ferry::cli::add_serve_command(app);
#endif

  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() > 1 && args.front() == "help" && !args[1].starts_with('-')) {
    const auto& topic = args[1];
    if (app.get_subcommands([&](const CLI::App* c) { return c->check_name(topic); }).empty())
      return report(("no command '" + topic + "' (`ferry help` lists them)").c_str(), exit_usage);
    args.erase(args.begin());
    args.emplace_back("--help");
  }
  const std::vector<std::string> typed = args;  // parse consumes args
  std::reverse(args.begin(), args.end());       // CLI11 takes them last first

  try {
    app.parse(args);  // subcommands run from their callbacks, inside parse
    // The formatter directly: app.help() would show the parsed `help` subcommand's own page.
    if (app.get_subcommands().empty() || help->parsed())
      std::fputs(app.get_formatter()->make_help(&app, "ferry", CLI::AppFormatMode::Normal).c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help or --version: printed, done
    // A mistyped flag or command first, with the nearest known name: CLI11 would say only that an
    // argument was not expected, or that the flag meant is required.
    if (const auto unknown = ferry::cli::unknown_option_message(app, typed))
      return report(unknown->c_str(), exit_usage);
    return report((std::string(e.what()) + " (--help lists the flags)").c_str(), exit_usage);
  } catch (const ferry::device_fault& e) {
    // Straight out: destructors of this process's CUDA objects and backends would only fail in the
    // lost context (or abort, in a framework's cleanup).
    report(e.what(), exit_device_fault);
    std::fflush(stdout);
    std::_Exit(exit_device_fault);
  } catch (const ferry::no_device& e) {
    return report(e.what(), exit_platform);
  } catch (const ferry::unsupported& e) {
    return report(e.what(), exit_platform);
  } catch (const ferry::invalid_argument& e) {
    return report(e.what(), exit_usage);
  } catch (const std::exception& e) {
    return report(e.what(), exit_runtime);
  } catch (...) {
    return report("unknown error", exit_runtime);
  }
}
