// Index inputs checked before an engine sees them.
//
// An integer input that indexes a table (token ids into an embedding, rows of a sparse lookup)
// declares its bound (tensor_spec::index_bound): valid values are [0, bound). A value outside
// makes a real model's kernel fail a device-side assert, which loses the GPU's context for the
// whole process (ferry/core/device_fault.hpp). So ferry checks such inputs on every path:
// - on the host, where the CPU has the bytes (a request body, system shared memory, a data file):
//   find_index_violation below, before the request is queued; and a session checks a small input
//   the CPU wrote into a slot's host view when it is submitted (a scan of a few KB costs less than
//   a kernel launch);
// - on the GPU, where only the GPU has them (CUDA shared memory, device-resident inputs) or where
//   the host's copy could still change (a client's shared memory), and for large inputs: a small
//   kernel on the slot's stream before the engine (session_options::index_checks), which sets
//   every value out of range to 0 before the engine reads it and reports the first one; the
//   request then fails with index_out_of_range and its answer, computed on the repaired input, is
//   never handed out.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ferry/core/error.hpp"
#include "ferry/engines/engine.hpp"

namespace ferry {

// The first value of an index input outside [0, bound), in row-major order.
struct index_violation {
  std::string tensor;
  std::int64_t value = 0;
  std::vector<std::int64_t> position;  // the element's index in each dim of `shape`
  std::int64_t bound = 0;
  std::uint64_t count = 1;  // how many values of the tensor are out of range
};

// "input 'input_ids': value 99999 at [0, 5] is outside [0, 30522) (3 values out of range)".
[[nodiscard]] std::string describe(const index_violation& v);

// A request whose index input holds a value outside its bound: the caller's mistake.
class index_out_of_range : public invalid_argument {
 public:
  explicit index_out_of_range(index_violation v);
  [[nodiscard]] const index_violation& violation() const noexcept { return violation_; }

 private:
  index_violation violation_;
};

// The first value of `data` outside [0, spec.index_bound), or nullopt when every value is inside
// or the spec has no bound. `data` holds spec's elements in row-major order, of its dtype (int32
// or int64), `shape` its concrete dims (a request's own shape, for the position). Runs at memory
// speed (a few GB/s per core).
[[nodiscard]] std::optional<index_violation> find_index_violation(std::span<const std::byte> data,
                                                                  const tensor_spec& spec,
                                                                  std::span<const std::int64_t> shape);

// The row-major position of element `flat` in `shape`.
[[nodiscard]] std::vector<std::int64_t> unravel(std::uint64_t flat, std::span<const std::int64_t> shape);

}  // namespace ferry
