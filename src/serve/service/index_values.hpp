// The values of a request's index inputs, checked on the host before it is queued.
#pragma once

#include "serve/vocabulary/inference.hpp"
#include "serve/vocabulary/model_signature.hpp"

namespace ferry::serve {

// Checks the values of every index input (an int32/int64 input with an index_bound) whose bytes
// the CPU can read: the request body and system shared memory, before the request is queued, so
// that an id out of range never reaches a model (ferry/session/index_check.hpp). Inputs in CUDA shared
// memory are checked on the GPU instead. `request` is planned (inputs in engine order). Throws
// request_error(bad_request) naming the model, the tensor, the value, its position and the bound.
void check_index_values(const model_signature& signature, const infer_request& request);

}  // namespace ferry::serve
