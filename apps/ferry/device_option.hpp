// `--device N`, written and checked alike in every command that takes one GPU.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace ferry::cli {

// Adds `--device ORDINAL` to `command`: `role` says what the GPU is for there ("report only
// this GPU"), `unset` what happens without the flag ("every GPU"). A negative ordinal is refused,
// naming the value. Returns the option, whose count() says whether it was given.
CLI::Option* add_device_option(CLI::App& command, int& device, const std::string& role, const std::string& unset);

}  // namespace ferry::cli
