// Moving request tensors into an engine run and results back out: the one copy each way that
// the server makes on the host (into the strategy's input buffers; out of its output buffers).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ferry/engine.hpp"
#include "serve/executor.hpp"

namespace ferry::serve {

// Rows of all items together (1 per item when the model does not batch).
[[nodiscard]] std::int64_t total_rows(std::span<const batch_item> batch) noexcept;

// The shapes the batch runs at: the first item's input shapes, leading dim = `rows` when batched.
[[nodiscard]] std::vector<shape_binding> batch_shapes(std::span<const batch_item> batch,
                                                      const model_signature& signature,
                                                      std::int64_t rows);

// Who reads a gathered input next, which decides how it is written: the CPU (the host executor's
// engine) finds it in its caches after ordinary stores; a DMA or the GPU (a session slot's input)
// reads it faster from memory, after streaming stores (ferry/streaming_copy.hpp).
enum class gathered_for { host, device };

// Copies input `index` of every item, one after another, into `destination`, and zero-fills the
// rest (padding rows when the engine runs a fixed batch larger than the requests' rows).
// Throws invalid_argument when the items do not fit or an input is device memory (a CUDA
// shared-memory region, which only the GPU executor's device gather reads).
void gather_input(std::span<const batch_item> batch, std::size_t index, std::span<std::byte> destination,
                  gathered_for reader);

// Gives every item its requested outputs: rows [offset, offset + item rows) of each engine output
// (the whole output when the model does not batch). `outputs` are the concrete output specs of
// the run (leading dim = the rows the engine ran) and `sources` their bytes, in engine order.
// An output with a shared-memory destination is written there (with cudaMemcpy for a CUDA
// region) instead of into the response.
void scatter_outputs(std::span<batch_item> batch, const model_signature& signature,
                     std::span<const tensor_spec> outputs, std::span<const std::span<const std::byte>> sources);

}  // namespace ferry::serve
