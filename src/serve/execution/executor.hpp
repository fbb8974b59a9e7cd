// The executor seam: how a batch of requests becomes one engine run. Two implementations share
// the scheduler: host_executor (built-in workloads computed on the CPU, for machines without a
// GPU) and session_executor (ferry sessions on the GPUs, with the model's transfer strategy).
// worker_device tells the scheduler which GPU each worker runs on, so a request whose input
// already sits in one GPU's memory is run by a worker of that GPU (worker_placement.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ferry/engines/engine.hpp"
#include "serve/observability/model_statistics.hpp"
#include "serve/vocabulary/inference.hpp"
#include "serve/vocabulary/model_signature.hpp"

namespace ferry::serve {

// One request inside a batch. Its inputs are in engine order (plan_request sorted them).
struct batch_item {
  const infer_request* request = nullptr;
  const request_plan* plan = nullptr;
  infer_response* response = nullptr;  // the executor appends the requested outputs
  // For each entry of plan->outputs: where to write that output instead of a new buffer (a
  // client's shared-memory range, at least the output's size), or an empty destination.
  std::vector<output_destination> output_destinations;
};

// One batch size an executor runs batches at, and its run time measured when the model loaded.
struct batch_bucket {
  std::int64_t rows = 0;
  std::chrono::nanoseconds run_time{0};
};

class executor {
 public:
  virtual ~executor() = default;
  // Declared I/O (dynamic dims as dynamic_dim): what model metadata reports.
  [[nodiscard]] virtual const std::vector<tensor_spec>& io() const = 0;
  // How many batches may run at once (instances x slots); the scheduler starts this many workers.
  [[nodiscard]] virtual int workers() const = 0;
  // The GPU worker `worker` runs its batches on; none for an executor that runs on the host.
  [[nodiscard]] virtual std::optional<int> worker_device(int /*worker*/) const { return std::nullopt; }
  // Where and how the model runs, for the startup log and metadata ("CPU reference", ...).
  [[nodiscard]] virtual std::string platform() const = 0;
  // The batch sizes a batch runs at (the smallest that holds its rows; ascending, the last
  // max_batch), with their measured run times: what the batcher weighs against a latency target.
  // Empty for an executor that runs each batch at exactly its rows (the host's).
  [[nodiscard]] virtual std::vector<batch_bucket> buckets() const { return {}; }
  // Runs one batch on worker `worker` (0 <= worker < workers(); one call per worker at a time)
  // and fills every item's response; the timing says the rows the engine ran (its bucket). Throws when the engine
  // fails; the responses are then incomplete and must be discarded.
  virtual batch_timing execute(std::span<batch_item> batch, int worker) = 0;
};

}  // namespace ferry::serve
