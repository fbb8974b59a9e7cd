// Work small enough to do where it is instead of handing it to a front end's pool: each hand-over
// is a thread woken, which costs more than decoding or encoding a few KiB (an inference whose
// tensors are in shared memory is a few hundred bytes each way). A request this small is decoded
// on the thread that received it (an HTTP I/O thread, a gRPC callback thread), and an answer whose
// tensors put this little data in it is encoded on the model's worker; anything larger goes to the
// pool, so neither thread is held for long.
#pragma once

#include <cstddef>

#include "serve/vocabulary/inference.hpp"

namespace ferry::serve {

inline constexpr std::size_t inline_request_bytes = 4096;
inline constexpr std::size_t inline_answer_bytes = 4096;

// The bytes of tensor data an answer carries (none for a failure; none for outputs written to
// shared memory).
[[nodiscard]] inline std::size_t answer_data_bytes(const infer_result& result) {
  std::size_t bytes = 0;
  if (!result.failure)
    for (const auto& out : result.response.outputs) bytes += out.data.size();
  return bytes;
}

// Whether an inference's answer is small enough to encode on the model's worker: a success whose
// outputs carry at most inline_answer_bytes. A failure goes to the pool: its error is handed on in
// its only copy (model_scheduler::fail).
[[nodiscard]] inline bool small_answer(const infer_result& result) {
  return !result.failure && answer_data_bytes(result) <= inline_answer_bytes;
}

}  // namespace ferry::serve
