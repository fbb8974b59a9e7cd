// "strategy": "auto" and "inflight": "auto" in a model's config.json: ferry::choose decides them
// when the model loads, from the first serving GPU's profile (ferry calibrate) or else the platform
// rules, and the reason is logged and shown in the model's documents. A built-in engine's tensors
// are sized before it loads, so its "auto" strategy is picked per tensor (choose_per_tensor): the
// overrides join the config's tensor_strategies, whose own entries are kept as written.
#pragma once

#include <string>

#include "serve/config/model_config.hpp"
#include "serve/execution/execution_platform.hpp"

namespace ferry::serve {

// Replaces the config's automatic settings with the pick and returns why, in one sentence; returns
// an empty string when nothing in the config is automatic. Throws invalid_argument for an engine
// spec it cannot size (the same error loading the model would give).
[[nodiscard]] std::string choose_automatic(model_config& config, const execution_platform& platform);

}  // namespace ferry::serve
