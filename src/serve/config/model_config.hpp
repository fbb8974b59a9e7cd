// A model's configuration: one JSON file, <repository>/<model>/config.json (its keys, what each
// takes and its default: serve/config/config_keys.cpp, the one table), e.g.
//   {"engine": "mlp:2x256", "strategy": "pinned", "inflight": 2, "instances_per_gpu": 1,
//    "max_batch": 16, "batch_delay_us": 500, "max_queue_size": 64}
//   {"engine": "touch", "input_size": "4MB"}
//   {"engine": "torch:/models/resnet50.pt2", "max_batch": 32}
//   {"engine": "reduce", "strategy": "auto", "inflight": "auto"}  (ferry::choose at load time)
//   {"engine": "sparse:0.01", "strategy": "pinned", "tensor_strategies": {"indices": "mapped"}}
//   {"engine": "torch:bert.pt2", "max_batch": 16, "index_bounds": {"input_ids": 30522},
//    "warmup_data": "warmup.npz"}
//   {"engine": "torch:/models/resnet50.pt2", "max_batch": 16, "graph": true}  (CUDA graphs)
// Unknown keys are refused, so a typo never silently leaves a setting at its default.
//
// A config is untrusted input: it is read with bounded nesting and size (no recursion a file can
// deepen), sizes that are not finite or do not fit are refused naming the key, and error messages
// quote at most a short excerpt of a value and never the text of a file that is not JSON.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/engines/model_engine.hpp"
#include "ferry/memory/strategy.hpp"
#include "ferry/session/graph_choice.hpp"

namespace ferry::serve {

inline constexpr std::string_view model_config_file = "config.json";
// A config is a few hundred bytes; a file larger than this is not one.
inline constexpr std::size_t max_model_config_bytes = std::size_t{1} << 20;

struct model_config {
  std::string name;                                // the model's folder name
  std::string engine;                              // built-in spec or "trt:"/"torch:" model file
  strategy_kind strategy = strategy_kind::pinned;  // host<->device path on a GPU
  int inflight = 2;                                // slots per instance (requests in flight)
  // "auto": chosen when the model loads (choose_automatic), from the GPU's profile or the rules.
  bool strategy_auto = false;
  bool inflight_auto = false;
  int instances_per_gpu = 1;  // sessions per GPU, each with its own slots
  // Largest batch (leading dim) one engine run takes; 0 for engines without a batch dim.
  // Requests are merged along the leading dim up to this many rows.
  std::int64_t max_batch = 0;
  // The batch sizes a batch runs at (the smallest that holds its rows), ascending, ending at
  // max_batch; empty: powers of two up to max_batch, and max_batch (default_batch_buckets).
  std::vector<std::int64_t> batch_buckets;
  // How long the first queued request may wait for others to join its batch.
  std::chrono::microseconds batch_delay{0};
  // With a target, the batcher waits for more rows only while the oldest request would still be
  // answered within it (scheduling/batching_policy.hpp).
  std::optional<std::chrono::microseconds> latency_target;
  // Requests that may wait for a worker at once; more are refused as unavailable (0 for no
  // limit, as in Triton). Unset: default_max_queue_size of the model's slots.
  std::optional<std::size_t> max_queue_size;
  std::size_t input_bytes = std::size_t{1} << 20;  // touch, reduce, sparse: f32 input size
  // Tensors that go another way than `strategy` ("tensor_strategies": {"indices": "mapped"}), by
  // tensor name. Whether each names a tensor of the engine is checked when the model loads.
  // With "strategy": "auto", these stay as written and the pick fills in the other tensors.
  std::vector<tensor_strategy> tensor_strategies;
  // What the warm-up feeds the model (ferry/session/input_data.hpp): "auto" (the default: finite floats,
  // integers inside their index_bound or zero, false), "zero", "random", or a .json/.npz file of
  // real inputs, relative to the model's folder (resolved there when the model loads).
  std::string warmup_data = "auto";
  // Bounds of a model file's integer inputs that the file does not give ("index_bounds":
  // {"input_ids": 30522}): requests are checked against them, and warm-up draws inside them.
  std::vector<index_bound_override> index_bounds;
  // "graph": true: requests run as CUDA graphs (session graph_mode::on): each slot's pipeline
  // captured where the engine allows it, else graphs the engine captures of its own run (AOTInductor
  // packages); the model's platform says which, or why none. "auto" (graph_mode::automatic): the
  // same, kept only where the load's warm-up measures them faster (ferry/session/graph_choice.hpp),
  // the figures in the platform. Off by default: a graph is worth its capture only where the
  // host's launches bound the rate.
  graph_mode graph = graph_mode::off;
};

// The queue bound of a model whose config sets none: 32 requests per slot (`workers` batches run
// at once), at least 64 so that as many clients as perf_analyzer's largest run wait rather than
// fail, at most 4096. A batched model merges queued requests, so the same bound holds more work
// per slot there, never less. Bounded, a queue holds a known number of requests (and the bytes the
// in-flight budget lets them have): a flood waits at most that deep, the rest is told 503.
[[nodiscard]] std::size_t default_max_queue_size(int workers);

// "table=pinned,indices=mapped": the overrides as one string, for the model's documents and logs;
// empty when there are none.
[[nodiscard]] std::string tensor_strategies_text(const std::vector<tensor_strategy>& overrides);

// Parses the JSON text of a config. Throws invalid_argument naming the model and the key for
// malformed JSON (by its offset, never quoting the text), nesting deeper than max_json_depth, a
// text over max_model_config_bytes, a missing engine, an unknown key, a wrong type or an
// out-of-range value (a size that is NaN, infinite, or beyond what this machine can address).
[[nodiscard]] model_config parse_model_config(std::string_view json_text, std::string model_name);

}  // namespace ferry::serve
