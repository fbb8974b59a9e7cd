// How many bytes an inference's answer can add to what its request holds, known before the
// model runs: the front ends take them from the in-flight budget when they queue a request
// (request_intake), so that answers count as much as requests do. A request whose answer could
// not fit is refused then, not after the model has made it.
//
// While the model runs, a request holds its own bytes and its outputs' raw bytes. The request's
// bytes go before the answer is encoded (the body, the parsed message), and the encoding holds
// the raw outputs and its own form of them: over HTTP a binary output is copied once into the
// body, a JSON output is built as a document (a 16-byte node per element) and printed as text of
// at most json_chars_per_element characters per element (a float printed as the double it
// becomes takes up to 24: "-1.1754943508222875e-38,"); over gRPC the outputs are copied into the
// response message and serialized from it. So the answer adds its raw bytes, and whatever its
// encoding needs beyond the request's own bytes. Outputs written to shared memory add nothing.
// Raw bytes come from the model's output shapes at the request's batch rows. The bound is taken
// before the request is checked in full (a shared-memory input is looked up later): its rows are
// read from its first input and held to [1, max_batch], its outputs are those it names that the
// model has (every output when it names none), and what is wrong with it is said by the check.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "ferry/core/dtype.hpp"
#include "serve/vocabulary/inference.hpp"
#include "serve/vocabulary/model_signature.hpp"

namespace ferry::serve {

enum class answer_protocol { http, grpc };

// The most characters one element of `type` takes in a JSON answer's "data", its comma included.
[[nodiscard]] std::size_t json_chars_per_element(dtype type) noexcept;

// What the answer to `request`, for a model of `signature`, may add to the `request_bytes` the
// request holds. Over HTTP, `binary(name)` says whether output `name` goes as binary data (JSON
// when it is unset or says no). A dynamic dim besides the batch counts as 1: such an output has no
// bound known in advance.
[[nodiscard]] std::size_t answer_bytes_bound(const model_signature& signature, const infer_request& request,
                                             answer_protocol protocol, std::size_t request_bytes,
                                             const std::function<bool(const std::string&)>& binary = {});

}  // namespace ferry::serve
