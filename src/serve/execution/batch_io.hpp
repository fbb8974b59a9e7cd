// Moving request tensors into an engine run and results back out on the host: the copies the
// server makes with the CPU (into a slot's input host view; out of an output's host view into a
// response, or into a system region on a host executor), and the responses themselves.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ferry/engines/engine.hpp"
#include "serve/execution/executor.hpp"
#include "serve/execution/output_routing.hpp"

namespace ferry::serve {

// Rows of all items together (1 per item when the model does not batch).
[[nodiscard]] std::int64_t total_rows(std::span<const batch_item> batch) noexcept;

// The shapes the batch runs at: the first item's input shapes, leading dim = `rows` when batched.
[[nodiscard]] std::vector<shape_binding> batch_shapes(std::span<const batch_item> batch,
                                                      const model_signature& signature, std::int64_t rows);

// Who reads a gathered input next, which decides how it is written: the CPU (the host executor's
// engine) finds it in its caches after ordinary stores; a DMA or the GPU (a session slot's input)
// reads it faster from memory, after streaming stores (ferry/memory/streaming_copy.hpp).
enum class gathered_for { host, device };

// Copies input `index` of every item, one after another, into `destination`, and zero-fills the
// rest (padding rows when the engine runs a fixed batch larger than the requests' rows).
// Throws invalid_argument when the items do not fit or an input is device memory (a CUDA
// shared-memory region, which only the GPU executor's device gather reads).
void gather_input(std::span<const batch_item> batch, std::size_t index, std::span<std::byte> destination,
                  gathered_for reader);

// Host executor: gives every item its requested outputs, rows [offset, offset + item rows) of
// each engine output (the whole output when the model does not batch), planned by plan_outputs.
// `outputs` are the concrete output specs of the run (leading dim = the rows the engine ran) and
// `sources` their bytes, in engine order. An output with a system shared-memory destination is
// copied there by the CPU; a CUDA destination is refused (invalid_argument): only a GPU slot
// writes device memory. `movable`, when given, owns `sources`: a batch of one request then takes
// an output returned whole in its response by moving its buffer, not copying it.
void scatter_outputs(std::span<batch_item> batch, const model_signature& signature,
                     std::span<const tensor_spec> outputs, std::span<const std::span<const std::byte>> sources,
                     std::span<std::vector<std::byte>> movable = {});

// Appends every step of `plan` to its item's response: response steps copy their slice of
// `host_views` (indexed by engine output; only those plan.host_view_needed must be valid),
// shared-memory steps, whose bytes are already in place, echo the client's range with the bytes
// written. `batched`: the output's leading dim becomes the item's rows. `movable`: as for
// scatter_outputs.
void answer_outputs(std::span<batch_item> batch, const output_plan& plan, std::span<const tensor_spec> outputs,
                    std::span<const std::span<const std::byte>> host_views, bool batched,
                    std::span<std::vector<std::byte>> movable = {});

}  // namespace ferry::serve
