// Runs a model on the GPUs through the library's replica_set: per GPU one engine and one session
// of `instances_per_gpu` x `inflight` slots, with the model's transfer strategy (and its
// tensor_strategies for the tensors that go another way). Each scheduler worker owns one slot's
// worth of work at a time (acquire -> fill -> submit -> wait -> read), so a session keeps all its
// slots' requests in flight and the copy of one overlaps the compute of another.
//
// A batched model runs at a fixed batch of max_batch rows (sessions bind concrete shapes once);
// a smaller batch is zero-padded and only its own rows are returned.
//
// Inputs take the route input_routing.hpp decides: a lone request's shared-memory range that is
// exactly the tensor is read in place (one DMA from a system region; no copy at all from a CUDA
// region, whose device memory the engine is bound to); merged or padded runs with shared-memory
// items are gathered by the slot's copies in stream order, others by the CPU into the slot's
// host view. Outputs take the route output_routing.hpp decides: bound in place, delivered by one
// copy per request range from the slot's device output, or read into the response. A CUDA
// region must be on the GPU of the instance that runs the request: worker_device tells the
// scheduler, which hands such a request only to that GPU's workers (check_cuda_inputs_on stays,
// as a safety net).
//
// Statistics count what the server does for the request: compute_input is the host time of
// filling the slot plus the copies before the engine (the strategy's and the gathers),
// compute_output the copies after it (the strategy's and the deliveries) plus the host time of
// building the responses.
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "ferry/device/device_caps.hpp"
#include "serve/config/model_config.hpp"
#include "serve/execution/executor.hpp"

namespace ferry::serve {

// Builds the engines (one per GPU of `gpus`, the server's --devices; model files through their
// backends, looked for in `backend_directories`) and sessions and warms every slot up. Throws what
// engine loading or session construction throws (invalid_argument, unsupported, cuda_error).
[[nodiscard]] std::unique_ptr<executor> make_session_executor(
    const model_config& config, const std::vector<device_caps>& gpus,
    const std::vector<std::filesystem::path>& backend_directories);

}  // namespace ferry::serve
