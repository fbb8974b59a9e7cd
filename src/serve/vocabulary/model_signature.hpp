// What a served model accepts and returns, and the check of one request against it.
//
// Every check happens before a request is queued, so a malformed request is answered at once
// and never reaches a batch it could spoil.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ferry/engines/engine.hpp"
#include "serve/vocabulary/inference.hpp"

namespace ferry::serve {

struct model_signature {
  std::vector<tensor_spec> inputs;   // engine order, dynamic dims as dynamic_dim
  std::vector<tensor_spec> outputs;  // engine order
  // > 0: every tensor's leading dim is the batch, requests carry 1..max_batch rows and may be
  // merged. 0: shapes are taken as they are and requests run one by one.
  std::int64_t max_batch = 0;
};

// Builds the signature of an engine's declared I/O. Throws invalid_argument when max_batch > 0
// but some tensor has no dynamic leading dim, or when max_batch == 0 and the engine still has
// dynamic dims (nothing would say what extent to run).
[[nodiscard]] model_signature make_signature(const std::vector<tensor_spec>& io, std::int64_t max_batch,
                                             const std::string& model);

// A request checked against a signature.
struct request_plan {
  std::int64_t rows = 1;             // batch rows (1 when the model does not batch)
  std::vector<std::size_t> outputs;  // indices into signature.outputs to return, in order
};

// Checks one input's name, datatype, shape and batch size against `signature`: what plan_request
// checks of an input alone, so that a front end can refuse a wrong tensor before reading its
// data. Throws request_error(bad_request) with plan_request's message.
void check_input(const model_signature& signature, const std::string& model, const input_tensor& input);

// Checks `request` against `signature` and sorts request.inputs into engine order. Throws
// request_error(bad_request) naming the tensor for an unknown, missing or repeated input, a
// wrong datatype, rank, dim, batch size or byte size, and an unknown or repeated output.
[[nodiscard]] request_plan plan_request(const model_signature& signature, infer_request& request);

// "input_ids=30522, attention_mask=none": each int32/int64 input's index_bound, for the model's
// metadata and config; empty when the model has no integer input.
[[nodiscard]] std::string index_bounds_text(const model_signature& signature);

}  // namespace ferry::serve
