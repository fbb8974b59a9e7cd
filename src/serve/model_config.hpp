// A model's configuration: one JSON file, <repository>/<model>/config.json, e.g.
//   {"engine": "mlp:2x256", "strategy": "pinned", "inflight": 2, "instances_per_gpu": 1,
//    "max_batch": 16, "batch_delay_us": 500, "max_queue_size": 64}
//   {"engine": "touch", "input_size": "4MB"}
//   {"engine": "torch:/models/resnet50.pt2", "max_batch": 32}
//   {"engine": "reduce", "strategy": "auto", "inflight": "auto"}  (ferry::choose at load time)
//   {"engine": "sparse:0.01", "strategy": "pinned", "tensor_strategies": {"indices": "mapped"}}
// Unknown keys are refused, so a typo never silently leaves a setting at its default.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/strategy.hpp"

namespace ferry::serve {

inline constexpr std::string_view model_config_file = "config.json";

struct model_config {
  std::string name;                                  // the model's folder name
  std::string engine;                                // built-in spec or "trt:"/"torch:" model file
  strategy_kind strategy = strategy_kind::pinned;    // host<->device path on a GPU
  int inflight = 2;                                  // slots per instance (requests in flight)
  // "auto": chosen when the model loads (choose_automatic), from the GPU's profile or the rules.
  bool strategy_auto = false;
  bool inflight_auto = false;
  int instances_per_gpu = 1;                         // sessions per GPU, each with its own slots
  // Largest batch (leading dim) one engine run takes; 0 for engines without a batch dim.
  // Requests are merged along the leading dim up to this many rows.
  std::int64_t max_batch = 0;
  // How long the first queued request may wait for others to join its batch.
  std::chrono::microseconds batch_delay{0};
  // Requests that may wait for a worker at once; more are refused as unavailable (Triton's name
  // and meaning: 0 for no limit).
  std::size_t max_queue_size = 0;
  std::size_t input_bytes = std::size_t{1} << 20;   // touch, reduce, sparse: f32 input size
  // Tensors that go another way than `strategy` ("tensor_strategies": {"indices": "mapped"}), by
  // tensor name. Whether each names a tensor of the engine is checked when the model loads.
  // With "strategy": "auto", these stay as written and the pick fills in the other tensors.
  std::vector<tensor_strategy> tensor_strategies;
};

// "table=pinned,indices=mapped": the overrides as one string, for the model's documents and logs;
// empty when there are none.
[[nodiscard]] std::string tensor_strategies_text(const std::vector<tensor_strategy>& overrides);

// Parses the JSON text of a config. Throws invalid_argument naming the model and the key for
// malformed JSON, a missing engine, an unknown key, a wrong type or an out-of-range value.
[[nodiscard]] model_config parse_model_config(std::string_view json_text, std::string model_name);

}  // namespace ferry::serve
