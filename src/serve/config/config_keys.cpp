#include "serve/config/config_keys.hpp"

#include <array>
#include <limits>

#include "ferry/core/byte_size.hpp"
#include "ferry/core/error.hpp"
#include "serve/codec/client_json.hpp"

namespace ferry::serve {
namespace {

using json = nlohmann::json;
constexpr std::int64_t int_max = std::numeric_limits<int>::max();
constexpr std::size_t max_batch_buckets = 64;

void read_engine(const config_reader& r, model_config& c) {
  c.engine = r.text("engine");
  if (c.engine.empty()) r.fail("'engine' is empty");
}

void read_strategy(const config_reader& r, model_config& c) {
  const std::string name = r.text("strategy");
  if (name == "auto") {
    c.strategy_auto = true;
    return;
  }
  try {
    c.strategy = parse_strategy(name);
  } catch (const invalid_argument& e) {
    r.fail(quote_text(e.what(), 256));
  }
}

void read_tensor_strategies(const config_reader& r, model_config& c) {
  const json& overrides = *r.find("tensor_strategies");
  if (!overrides.is_object())
    r.fail(
        "'tensor_strategies' must be an object of tensor names to strategies (e.g. {\"indices\": \"mapped\"}), got " +
        quote_json(overrides));
  for (const auto& [tensor, value] : overrides.items()) {
    const std::string key = "'tensor_strategies': '" + quote_text(tensor) + "'";
    if (!value.is_string()) r.fail(key + " must be a strategy name, got " + quote_json(value));
    try {
      c.tensor_strategies.push_back({tensor, parse_strategy(value.get<std::string>())});
    } catch (const invalid_argument& e) {
      r.fail(key + ": " + quote_text(e.what(), 256));
    }
  }
}

void read_inflight(const config_reader& r, model_config& c) {
  const json& inflight = *r.find("inflight");
  if (!inflight.is_string()) {
    c.inflight = static_cast<int>(r.integer("inflight", 1, 64));
    return;
  }
  if (inflight.get<std::string>() != "auto")
    r.fail("'inflight' must be a count in [1, 64] or \"auto\", got " + quote_json(inflight));
  c.inflight_auto = true;
}

void read_graph(const config_reader& r, model_config& c) {
  const json& graph = *r.find("graph");
  if (graph.is_boolean())
    c.graph = graph.get<bool>() ? graph_mode::on : graph_mode::off;
  else if (graph.is_string() && graph.get<std::string>() == "auto")
    c.graph = graph_mode::automatic;
  else
    r.fail("'graph' must be true, false or \"auto\", got " + quote_json(graph));
}

void read_instances(const config_reader& r, model_config& c) {
  c.instances_per_gpu = static_cast<int>(r.integer("instances_per_gpu", 1, 64));
}

void read_max_batch(const config_reader& r, model_config& c) { c.max_batch = r.integer("max_batch", 0, int_max); }

void read_batch_buckets(const config_reader& r, model_config& c) {
  const json& buckets = *r.find("batch_buckets");
  if (!buckets.is_array() || buckets.empty() || buckets.size() > max_batch_buckets)
    r.fail("'batch_buckets' must be a list of 1 to " + std::to_string(max_batch_buckets) +
           " batch sizes, ascending (e.g. [1, 4, 16, 64]), got " + quote_json(buckets));
  for (const json& b : buckets) {
    if (!b.is_number_integer() || b.get<std::int64_t>() < 1 ||
        (b.is_number_unsigned() && b.get<std::uint64_t>() > int_max))
      r.fail("'batch_buckets' holds " + quote_json(b) + ": each must be a whole number of rows, at least 1");
    const auto rows = b.get<std::int64_t>();
    if (!c.batch_buckets.empty() && rows <= c.batch_buckets.back())
      r.fail("'batch_buckets' must be ascending, each size once: " + std::to_string(rows) + " follows " +
             std::to_string(c.batch_buckets.back()));
    c.batch_buckets.push_back(rows);
  }
}

void read_batch_delay(const config_reader& r, model_config& c) {
  c.batch_delay = std::chrono::microseconds(r.integer("batch_delay_us", 0, 10'000'000));
}

void read_latency_target(const config_reader& r, model_config& c) {
  const double ms = r.number("latency_target_ms", 0.01, 60'000);
  c.latency_target = std::chrono::microseconds(static_cast<std::int64_t>(ms * 1000.0));
}

void read_max_queue_size(const config_reader& r, model_config& c) {
  c.max_queue_size = static_cast<std::size_t>(r.integer("max_queue_size", 0, int_max));
}

void read_index_bounds(const config_reader& r, model_config& c) {
  const json& bounds = *r.find("index_bounds");
  if (!bounds.is_object())
    r.fail("'index_bounds' must be an object of input names to bounds (e.g. {\"input_ids\": 30522}), got " +
           quote_json(bounds));
  for (const auto& [tensor, value] : bounds.items()) {
    const std::string key = "'index_bounds': '" + quote_text(tensor) + "'";
    if (!value.is_number_integer() || value.get<std::int64_t>() < 1 ||
        (value.is_number_unsigned() && value.get<std::uint64_t>() > std::uint64_t{1} << 62))
      r.fail(key + " must be a whole number of at least 1, got " + quote_json(value));
    c.index_bounds.push_back({tensor, value.get<std::int64_t>()});
  }
  if (!c.index_bounds.empty() && !is_model_engine_spec(c.engine))
    r.fail("'index_bounds' bounds a model file's inputs; built-in engine '" + quote_text(c.engine) +
           "' declares its own");
}

void read_warmup_data(const config_reader& r, model_config& c) {
  c.warmup_data = r.text("warmup_data");
  if (c.warmup_data.empty())
    r.fail("'warmup_data' is empty (auto, zero, random, or a .json/.npz file in the model's folder)");
}

void read_input_size(const config_reader& r, model_config& c) {
  if (r.find("input_size")->is_number_integer()) {
    c.input_bytes = static_cast<std::size_t>(r.integer("input_size", 1, std::numeric_limits<std::int64_t>::max()));
    return;
  }
  try {
    c.input_bytes = parse_byte_size(r.text("input_size"));
  } catch (const invalid_argument& e) {
    r.fail("'input_size': " + quote_text(e.what(), 256));
  }
}

constexpr std::array keys{
    config_key{"engine",
               "a built-in (`touch`, `reduce`, `reduce:P`, `sparse:F`, `mlp:LxW`) or a model file "
               "`BACKEND:PATH` (`torch:PATH.pt2`, `trt:PATH.plan`, `affine:PATH`; a relative PATH is read "
               "from the model's folder)",
               "required", "What runs the model.", read_engine},
    config_key{"strategy", "a strategy name, or `\"auto\"`", "`pinned`",
               "The host<->device path of every tensor; `auto` is chosen at load from the GPU's profile, or the "
               "platform rules, and shown under `parameters` in the model's config and metadata.",
               read_strategy},
    config_key{"tensor_strategies", "an object of tensor names to strategy names (`{\"indices\": \"mapped\"}`)", "none",
               "Tensors that go another way than `strategy`; a name that is no tensor of the engine makes the model "
               "unavailable at load, naming it.",
               read_tensor_strategies},
    config_key{"inflight", "a count in [1, 64], or `\"auto\"`", "2",
               "Slots per instance: requests in flight at once; `auto` as for `strategy`.", read_inflight},
    config_key{"graph", "`true`, `false` or `\"auto\"`", "`false`",
               "Requests run as CUDA graphs (each slot's pipeline, or graphs an AOTInductor package captures of its "
               "own run, one per batch bucket); `auto` keeps them only where the load's warm-up measures them "
               "faster. The model's platform says which, or why none.",
               read_graph},
    config_key{"instances_per_gpu", "a count in [1, 64]", "1", "Sessions per GPU, each with its own slots.",
               read_instances},
    config_key{"max_batch", "a count of rows, 0 for engines without a batch dim", "0",
               "The largest batch one engine run takes; requests are merged along the leading dim up to it.",
               read_max_batch},
    config_key{"batch_buckets", "ascending batch sizes ending at `max_batch` (`[1, 4, 16, 64]`)",
               "powers of two up to `max_batch`, and `max_batch`",
               "A batch runs at the smallest bucket that holds its rows, padded only to it (one CUDA graph per "
               "bucket); an engine without a dynamic batch dim runs at `max_batch` only.",
               read_batch_buckets},
    config_key{"batch_delay_us", "microseconds in [0, 10000000]", "0",
               "How long the first queued request may wait for others to join its batch (a bound, also with "
               "`latency_target_ms`).",
               read_batch_delay},
    config_key{"latency_target_ms", "milliseconds in [0.01, 60000]", "none",
               "While the model's other workers are busy, the batcher waits for more rows only while the oldest "
               "request would still finish within it (its wait plus the measured run time of the bucket it would "
               "join) and rows keep coming; without it, what is queued runs when a worker is free.",
               read_latency_target},
    config_key{"max_queue_size", "a count, 0 for no limit", "32 per slot, at least 64, at most 4096",
               "Requests that may wait for a worker at once; more are refused with 503 and `Retry-After` / "
               "UNAVAILABLE.",
               read_max_queue_size},
    config_key{"index_bounds", "an object of input names to bounds (`{\"input_ids\": 30522}`)", "none",
               "Bounds of a model file's integer inputs the file gives none for: requests are checked against them, "
               "and the warm-up draws inside them.",
               read_index_bounds},
    config_key{"warmup_data", "`auto`, `zero`, `random`, or a `.json`/`.npz` file in the model's folder", "`auto`",
               "What the load's warm-up feeds the model, as `ferry bench --input-data` reads it.", read_warmup_data},
    config_key{"input_size", "bytes, or a size such as `\"4MB\"`", "1 MiB",
               "The input size of the built-ins `touch`, `reduce` and `sparse`.", read_input_size},
};

}  // namespace

std::span<const config_key> config_keys() noexcept { return keys; }

const config_key* find_config_key(std::string_view name) noexcept {
  for (const auto& k : keys)
    if (k.name == name) return &k;
  return nullptr;
}

std::string config_key_names() {
  std::string names;
  for (const auto& k : keys) names += (names.empty() ? "" : ", ") + std::string(k.name);
  return names;
}

std::string config_keys_markdown() {
  std::string table = "| key | takes | default | what it does |\n|---|---|---|---|\n";
  for (const auto& k : keys)
    table += "| `" + std::string(k.name) + "` | " + std::string(k.takes) + " | " + std::string(k.fallback) + " | " +
             std::string(k.help) + " |\n";
  return table;
}

void check_config_keys(const config_reader& reader, const model_config& config) {
  if (!config.batch_buckets.empty()) {
    if (config.max_batch <= 0) reader.fail("'batch_buckets' needs a batched model ('max_batch' above 0)");
    if (config.batch_buckets.back() != config.max_batch)
      reader.fail("'batch_buckets' must end at 'max_batch' (" + std::to_string(config.max_batch) + "), not at " +
                  std::to_string(config.batch_buckets.back()) + ": a batch of more rows would have no bucket");
  }
  if (config.latency_target && config.max_batch <= 0)
    reader.fail("'latency_target_ms' bounds how long a batch waits to fill: it needs 'max_batch' above 0");
}

}  // namespace ferry::serve
