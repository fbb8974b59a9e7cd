// Runs the built ferry CLI as a user would, for the CLI tests: its exit code and what it printed.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct cli_result {
  int exit_code;
  std::string output;
};

// Runs the built ferry binary with `args`, capturing the streams `stream` names.
enum class captured { stderr_only, stdout_only, both };

cli_result run_cli([[maybe_unused]] const std::string& args, [[maybe_unused]] captured stream) {
#ifdef FERRY_CLI_PATH
  const std::string redirect = stream == captured::stderr_only   ? " 2>&1 1>/dev/null"
                               : stream == captured::stdout_only ? " 2>/dev/null"
                                                                 : " 2>&1";
  // FERRY_CLI overrides the build-time path, for test binaries carried to another machine.
  const char* moved = std::getenv("FERRY_CLI");
  const std::string command = std::string("'") + (moved ? moved : FERRY_CLI_PATH) + "' " + args + redirect;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string output;
  std::array<char, 4096> chunk{};
  while (const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe)) output.append(chunk.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
#else
  return {-1, "FERRY_CLI_PATH not defined"};
#endif
}

#ifdef FERRY_CLI_PATH
constexpr bool cli_built = true;
#else
constexpr bool cli_built = false;
#endif

}  // namespace
