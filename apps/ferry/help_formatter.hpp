// How ferry's --help pages write an option: the names as a user types them ("--warmup,
// --no-warmup", not CLI11's "--warmup,--no-warmup{false}"), the value as one word (INT, FLOAT,
// TEXT, a folder or file, or the choices "latency|throughput"), and the range, default and the
// options it excludes in words after the description ("[1 to 1024; default 8000]"), not in CLI11's
// notation ("INT:INT in [1 - 1024]=8000").
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace ferry::cli {

class help_formatter final : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* option, bool is_positional) const override;
  std::string make_option_opts(const CLI::Option* option) const override;
  std::string make_option_desc(const CLI::Option* option) const override;
};

}  // namespace ferry::cli
