// `ferry info`: what each GPU can do, which strategies work on it (and why not), what to start
// with, and optionally the measured pinned link peak.
#pragma once

#include <optional>

namespace ferry::cli {

enum class info_format { text, json };
enum class link_measurement { skip, measure };

struct info_options {
  info_format format = info_format::text;
  link_measurement link = link_measurement::skip;
  std::optional<int> device;  // every device when absent
};

// Queries the devices, optionally measures their links, and prints the report to stdout.
// Throws ferry::no_device when there is no GPU and ferry::invalid_argument for a bad ordinal.
void run_info(const info_options& options);

}  // namespace ferry::cli
