// The ferry command-line tool: parses the command line and hands over to a subcommand.
//
// Error policy: whatever goes wrong reaches the user as one line on stderr, prefixed "ferry: ",
// and a non-zero exit code; never an abort or an uncaught exception. Exit codes: 2 when there
// is no CUDA device, 1 for every other error, CLI11's own codes for command-line mistakes.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "ferry/error.hpp"

namespace {

constexpr int exit_error = 1;
constexpr int exit_no_device = 2;

int report(const char* message, int code) {
  std::string line = message;
  std::replace(line.begin(), line.end(), '\n', ' ');  // one line, whatever the message holds
  std::fprintf(stderr, "ferry: %s\n", line.c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ferry: moves inference inputs and outputs between host and GPU at the lowest "
               "cost the platform allows",
               "ferry"};
  app.require_subcommand(1);
  // A bare `ferry` shows the full help; other mistakes get CLI11's short message.
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    return a->get_subcommands().empty() ? CLI::FailureMessage::help(a, e)
                                        : CLI::FailureMessage::simple(a, e);
  });

  ferry::cli::add_info_command(app);
  ferry::cli::add_calibrate_command(app);
  std::string command_line = "ferry";
  for (int i = 1; i < argc; ++i) command_line += std::string(" ") + argv[i];
  ferry::cli::add_bench_command(app, command_line);
#ifdef FERRY_HAVE_SERVE
  ferry::cli::add_serve_command(app);
#endif

  try {
    app.parse(argc, argv);  // subcommands run from their callbacks, inside parse
    return 0;
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const ferry::no_device& e) {
    return report(e.what(), exit_no_device);
  } catch (const std::exception& e) {
    return report(e.what(), exit_error);
  } catch (...) {
    return report("unknown error", exit_error);
  }
}
