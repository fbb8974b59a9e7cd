// Every key of a model's config.json, declared once: its name, what it takes, its default, a line
// of help and its reader. The parser's allow-list, its error text ("known: ...") and the key table
// of docs/USAGE.md are all made from this one table, so a new key is one entry here (and its
// field in model_config). Checks across keys (a bucket list against max_batch) run after every key
// is read (check_config_keys).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "serve/config/config_reader.hpp"
#include "serve/config/model_config.hpp"

namespace ferry::serve {

struct config_key {
  std::string_view name;
  std::string_view takes;     // what the value may be, for people
  std::string_view fallback;  // the default, for people
  std::string_view help;      // one sentence
  void (*read)(const config_reader& reader, model_config& config);
};

// In the order they are read: `engine` first, since other keys are checked against it.
[[nodiscard]] std::span<const config_key> config_keys() noexcept;
// The key named `name`, or null.
[[nodiscard]] const config_key* find_config_key(std::string_view name) noexcept;
// "engine, strategy, ...": the known keys, for an error message.
[[nodiscard]] std::string config_key_names();
// The markdown table of the keys that docs/USAGE.md holds (a test keeps the two equal).
[[nodiscard]] std::string config_keys_markdown();
// What no single key can check: batch_buckets and latency_target_ms against max_batch.
void check_config_keys(const config_reader& reader, const model_config& config);

}  // namespace ferry::serve
