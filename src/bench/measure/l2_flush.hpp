// Evicts a GPU's L2 cache before a timed request, as nvbench does before each sample. A kernel's
// data from the request before (or from the untimed upload of a device-resident input) may or may
// not still sit in the 50 MB L2 of an H200, depending on where fresh allocations landed: one trial
// of a 19 MB cell on device-resident data took 22 us and the next 35 us. Starting every request
// from a cold L2 makes that a fixed condition instead of an accident of placement. Used where a
// cell runs one request at a time (paired_loop); private to src/bench.
#pragma once

#include <cstddef>

#include "core/device_memory.hpp"
#include "core/device_stream.hpp"

namespace ferry::bench {

class l2_flush {
 public:
  explicit l2_flush(int ordinal);

  // Writes a buffer the size of the L2 cache on the GPU's own stream and waits for it, so nothing
  // of it overlaps the request timed next.
  void flush_blocking();

 private:
  core::device_stream stream_;
  core::device_memory buffer_;
};

}  // namespace ferry::bench
