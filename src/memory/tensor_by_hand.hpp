// One tensor of a strategy's request written by hand, as directly as the CUDA runtime allows: what
// the bench's recipes are made of (src/bench/measure/recipes: the engine, one stream, one
// synchronize around these steps), timed beside the strategy itself.
//
// A strategy's figure is credible only beside the same steps written by hand: the gap between the
// two is ferry's cost, not the platform's. So a strategy's by-hand tensor shares nothing with its
// buffer (src/memory's buffer types) but core's RAII owners of raw allocations: a mistake in the
// buffer shows up as a gap instead of being copied into its yardstick. Each strategy's steps:
// memory/by_hand/ (the families the built-ins share) or the strategy's own folder.
#pragma once

#include <cstddef>
#include <span>

#include "ferry/core/stream.hpp"

namespace ferry::memory {

class tensor_by_hand {
 public:
  virtual ~tensor_by_hand() = default;
  tensor_by_hand() = default;
  tensor_by_hand(const tensor_by_hand&) = delete;
  tensor_by_hand& operator=(const tensor_by_hand&) = delete;

  // Where the CPU writes the input before a request, or reads the output after one.
  [[nodiscard]] virtual std::span<std::byte> host() noexcept = 0;
  // What the engine is bound to.
  [[nodiscard]] virtual void* device() const noexcept = 0;

  // An input, after the CPU wrote it: its steps before the engine, on `s`.
  virtual void before_engine(stream_ref /*s*/) {}
  // An output: its steps after the engine, on `s`.
  virtual void after_engine(stream_ref /*s*/) {}
  // An output, once the stream has synchronized: the CPU's last step.
  virtual void after_synchronize() {}
  // Data kept in GPU memory (data_path::resident), outside the timing: the input copied where the
  // engine reads it after the CPU wrote it, the output copied back for a check. The caller
  // synchronizes `s` after them.
  virtual void stage_untimed(stream_ref /*s*/) {}
  virtual void fetch_untimed(stream_ref /*s*/) {}
};

}  // namespace ferry::memory
