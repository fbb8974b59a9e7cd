// Which GPU's workers run a queued request: pure rules, tested without threads or GPUs
// (model_scheduler.cpp checks required_gpu when a request is queued; worker_placement.cpp spreads
// the rest under the scheduler's lock).
//
// Placement follows the data: a request with an input in a CUDA shared-memory region runs on
// that region's GPU, where the engine reads it in place or gathers it device-to-device (another
// GPU would need peer reads behind the client's back, which check_cuda_inputs_on refuses). So
// its CUDA inputs must agree on one GPU and the model must have workers there; both are checked
// when the request is queued, so it is refused at once instead of waiting for a worker that
// never comes.
//
// A request without CUDA inputs may run anywhere, and is spread by load with the library's one
// rule (ferry/session/placement.hpp, placement_policy, no preferred device): each GPU's workers are a
// replica whose slots are its workers and whose busy slots are the workers running a batch, so
// it goes to the GPU with the fewest running batches among those with an idle worker, ties in
// turn (starting after the GPU that last started a batch). Sequential requests therefore
// alternate over the GPUs, and concurrent ones fill the least busy GPU first, instead of piling
// onto GPU 0's workers.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "serve/vocabulary/inference.hpp"

namespace ferry::serve {

// The GPU `request` must run on: the one holding its CUDA shared-memory inputs; none when it has
// none. `model_gpus` are the GPUs the model has workers on (empty: it runs on the host). Throws
// request_error(bad_request) naming the tensors, their regions and GPUs when its CUDA inputs sit
// on two GPUs, or when their GPU is not one of `model_gpus` (naming those).
[[nodiscard]] std::optional<int> required_gpu(const infer_request& request, std::span<const int> model_gpus,
                                              std::string_view model);

}  // namespace ferry::serve
