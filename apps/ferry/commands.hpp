// The subcommands of the ferry CLI. Each registers itself on the app with its options and a
// callback that runs it; failures are reported by throwing (main turns them into one line).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace ferry::cli {

// `ferry info [--measure] [--json] [--device N] [--profile PATH]`: platform capabilities and
// advice, measured on this machine where a profile is (`--measure` calibrates first).
void add_info_command(CLI::App& app);

// `ferry calibrate [--quick | --thorough] [--device N] [--profile PATH]`: measures this machine
// and saves each GPU's profile (apps/ferry/calibrate_command.cpp).
void add_calibrate_command(CLI::App& app);

// `ferry bench ...`: measures the strategies on an engine (apps/ferry/bench_command.cpp).
// command_line is recorded in the reports so every figure says how it was produced.
void add_bench_command(CLI::App& app, std::string command_line);

// `ferry serve --model-repository DIR ...`: the KServe v2 server (apps/ferry/serve_command.cpp).
// Starts without a GPU too, serving built-in models on the CPU.
void add_serve_command(CLI::App& app);

}  // namespace ferry::cli
