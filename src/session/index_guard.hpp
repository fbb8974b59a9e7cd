// The GPU side of ferry/session/index_check.hpp: one guarded input of one slot. Internal to src/session.
//
// enqueue() launches one kernel on the slot's stream, before the engine: it reads every value of
// the input where the engine will read it and sets each one outside [0, bound) to 0, so the engine
// never indexes past its table (which would lose the GPU's context). Most requests hold no such
// value, and then the kernel writes nothing the host reads: before each request the host zeroes
// the count in page-locked memory (reset(), on the slot's thread, also before a graph's replay),
// and only a request with a value out of range writes its count and first value there. Blocks
// combine their findings through device memory and the last block to finish (the CUDA samples'
// threadFenceReduction), so one launch does it with nothing else to reset. violation() reads the
// result once the stream's work has finished.
#pragma once

#include <optional>

#include "core/device_memory.hpp"
#include "core/pinned_memory.hpp"
#include "ferry/core/stream.hpp"
#include "ferry/engines/engine.hpp"
#include "ferry/session/index_check.hpp"

namespace ferry::detail {

// What the kernel writes for the host when a value is out of range; count 0 otherwise.
struct index_guard_result {
  unsigned long long count;
  unsigned long long first;  // flat position of the first value out of range
  long long value;
};

class index_guard {
 public:
  // For an int32 or int64 input with an index_bound, on the device current now.
  explicit index_guard(const tensor_spec& spec);

  // Checks `spec` from now on: the same input at another batch size, no more elements than the
  // guard was made for (its blocks). Throws invalid_argument otherwise.
  void reshape(const tensor_spec& spec);
  // Zeroes the host's copy of the result: before each request is enqueued (or replayed).
  void reset() noexcept;
  // Checks and repairs the input's elements at `device_data` (where the engine reads them: device,
  // mapped host or managed memory), on `stream`.
  void enqueue(void* device_data, stream_ref stream) const;
  // The first value out of range of the last request, once `stream` has finished it.
  [[nodiscard]] std::optional<index_violation> violation() const;

 private:
  tensor_spec spec_;
  std::size_t capacity_ = 0;  // the elements the guard was made for
  int blocks_ = 1;
  core::device_memory scratch_;  // per-block findings, then the arrival counter and the found flag
  core::pinned_memory result_;   // index_guard_result, mapped for the kernel
  index_guard_result* device_result_ = nullptr;
};

}  // namespace ferry::detail
