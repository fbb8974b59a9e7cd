// The GPU side of ferry/index_check.hpp: one guarded input of one slot. Internal to src/session.
//
// enqueue() launches one kernel on the slot's stream, before the engine: it reads every value of
// the input where the engine will read it, sets each one outside [0, bound) to 0 (so the engine
// never indexes past its table, which would lose the GPU's context) and writes the count and the
// first such value into page-locked host memory. Blocks reduce their own findings and the last
// block to finish combines them (the CUDA samples' threadFenceReduction), so one launch does it,
// with nothing to reset between requests, also when the slot's pipeline is a captured graph.
// violation() reads that memory once the stream's work has finished.
#pragma once

#include <optional>

#include "core/device_memory.hpp"
#include "core/pinned_memory.hpp"
#include "ferry/engine.hpp"
#include "ferry/index_check.hpp"
#include "ferry/stream.hpp"

namespace ferry::detail {

// What the kernel writes for the host; count 0 when every value was inside.
struct index_guard_result {
  unsigned long long count;
  unsigned long long first;  // flat position of the first value out of range
  long long value;
};

class index_guard {
 public:
  // For an int32 or int64 input with an index_bound, on the device current now.
  explicit index_guard(const tensor_spec& spec);

  // Checks and repairs the input's elements at `device_data` (where the engine reads them: device,
  // mapped host or managed memory), on `stream`.
  void enqueue(void* device_data, stream_ref stream) const;
  // The first value out of range of the last request, once `stream` has finished it.
  [[nodiscard]] std::optional<index_violation> violation() const;

 private:
  tensor_spec spec_;
  int blocks_ = 1;
  core::device_memory scratch_;  // per-block findings, then the arrival counter
  core::pinned_memory result_;   // index_guard_result, mapped for the kernel
  index_guard_result* device_result_ = nullptr;
};

}  // namespace ferry::detail
