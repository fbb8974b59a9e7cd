// Where each requested output of a batch goes when the batch runs on a GPU slot, decided from the
// batch alone: a pure function, so every rule is tested without a GPU (session_executor.cpp
// carries the plan out, batch_io.cpp builds the responses).
//
// No output is staged through the slot's host view on its way into shared memory:
//  - bound in place: a lone request whose CUDA-shm range is exactly the output, 256-byte aligned,
//    and that the session's rule takes (ferry/session/caller_memory.hpp, caller_output_refusal): the
//    engine writes the region itself; no copy at all. Under zero-copy strategies an exact, aligned
//    system-shm range is bound the same way (the engine writes host memory anyway).
//  - delivered: any other shared-memory destination (a system region, registered with CUDA once;
//    a CUDA region that is larger, misaligned, or one row range of a batch): one copy of the
//    request's bytes in the slot's stream order, from the slot's device output (a DMA into a
//    system region, device-to-device into a CUDA one), so a result never crosses the bus twice.
//  - response: into the response body, from the slot's host view.
// Zero-copy strategies keep outputs in mapped host memory: a system range is bound in place (the
// engine writes host memory anyway, now the client's), and a delivery to a CUDA range reads that
// host memory across the bus, as the strategy always does. Managed strategies are never bound to
// a host range (their engine writes managed pages); a delivery copies the output from wherever
// its pages are. An exact, aligned CUDA range is bound under every strategy.
// A slot's host view of an output is fetched only when some request reads it in the response.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "ferry/engines/engine.hpp"
#include "ferry/session/caller_memory.hpp"
#include "serve/execution/executor.hpp"

namespace ferry::serve {

enum class output_route { response, bind_in_place, deliver };

// One requested output of one item of the batch.
struct output_step {
  std::size_t item = 0;    // index into the batch
  std::size_t k = 0;       // index into that item's plan->outputs (and output_destinations)
  std::size_t output = 0;  // the engine output
  output_route route = output_route::response;
  std::size_t offset = 0;  // the item's bytes of the engine output: [offset, offset + bytes)
  std::size_t bytes = 0;
};

struct output_plan {
  std::vector<output_step> steps;      // batch order, each item's outputs in its plan's order
  std::vector<bool> host_view_needed;  // per engine output: some step reads it into a response
};

// What caller memory an output destination is, as the session's rule sees it (a system region is
// registered with CUDA wherever a GPU executor runs).
[[nodiscard]] caller_memory destination_memory(const output_destination& destination);

// The plan for `batch`, whose engine outputs are `outputs` (concrete, leading dim = the rows the
// engine runs when `signature` batches) on a slot described, for each output, by `slots` (one
// per output: outputs may go by different strategies). Throws invalid_argument naming the output
// when a shared-memory range is smaller than the request's bytes of it.
[[nodiscard]] output_plan plan_outputs(std::span<const batch_item> batch, const model_signature& signature,
                                       std::span<const tensor_spec> outputs, std::span<const slot_facts> slots);
// The same where every output goes by the strategy of `slot`.
[[nodiscard]] output_plan plan_outputs(std::span<const batch_item> batch, const model_signature& signature,
                                       std::span<const tensor_spec> outputs, const slot_facts& slot);

}  // namespace ferry::serve
