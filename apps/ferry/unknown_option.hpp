// Names a mistyped flag or command with the nearest one the command knows, where CLI11 alone
// says only that an argument was not expected, or that the flag the user meant is required:
//   ferry serve --model-repo x  ->  "unknown option --model-repo; did you mean --model-repository?
//                                    --model-repository is required (--help lists the flags)"
//   ferry bench --sise 19MB     ->  "unknown option --sise; did you mean --size?"
//   ferry bnch                  ->  "unknown command 'bnch'; did you mean bench?"
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace ferry::cli {

// The first long option (--name or --name=value) on `args` (in the order typed) that the command
// it follows does not have, or the first word where a command was expected that names none, as
// one line with the nearest known name and where to find them all ("(--help lists the flags)");
// std::nullopt when there is none. Read after a failed parse: a required option that is still
// missing is said to be required.
std::optional<std::string> unknown_option_message(const CLI::App& app, const std::vector<std::string>& args);

// Of `known`, the name nearest to `typed`: one `typed` begins, else the fewest edits (an insert,
// a deletion, a change or two neighbours swapped), if few enough to be a typo; the first in
// `known` on a tie.
std::optional<std::string> nearest_name(std::string_view typed, const std::vector<std::string>& known);

}  // namespace ferry::cli
