// The batch sizes a session runs at (session_options::batch_sizes): for each, the concrete I/O
// the engine resolves, checked to be the first rows of the session's full I/O, so that a smaller
// batch runs in the same buffers and moves only its rows. Pure over the engine's resolve, so it is
// tested without a GPU. Internal to src/session.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ferry/engines/engine.hpp"

namespace ferry::detail {

// One batch size and the concrete I/O of a run at it, in the session's tensor order.
struct batch_shape {
  std::int64_t rows = 0;
  std::vector<tensor_spec> io;
};

// The shapes a session of `full_io` runs: one per entry of `sizes` (ascending, each from 1 to the
// full batch), then the full I/O itself; only the full I/O when `sizes` is empty (rows 0 when its
// first tensor has no dims). The full batch is the leading dim of every tensor; a smaller one is
// resolved by `eng` with every input's leading dim set to it. Throws invalid_argument naming the
// size or the tensor when the sizes are not ascending or leave [1, full], a tensor does not lead
// with the batch, the engine refuses a size, or a resolved tensor is not the first rows of the
// full one (another dtype, other trailing dims).
[[nodiscard]] std::vector<batch_shape> resolve_batch_shapes(const engine& eng, const std::vector<tensor_spec>& full_io,
                                                            std::span<const std::int64_t> sizes);

}  // namespace ferry::detail
