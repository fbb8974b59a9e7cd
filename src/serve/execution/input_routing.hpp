// How each input of a batch reaches the engine on a GPU, decided from the batch alone: a pure
// function, so every rule is tested without a GPU (session_executor.cpp carries the routes out).
//
// In place is best: a lone request whose shared-memory range is exactly the tensor is handed to
// filling_slot::use_caller_input when the session's own rule (ferry/session/caller_memory.hpp,
// caller_input_refusal) takes it: one DMA from a registered system region (or the engine bound to
// it, under zero-copy strategies), no copy at all from a CUDA region. Anything else is gathered:
// merged requests and zero-padded rows must be laid out contiguously first, by copies on the
// slot's stream when some item is in shared memory (one DMA or device-to-device copy per item),
// or by the CPU into the slot's host view when every item came in the request body.
//
// A system region is registered with CUDA wherever a GPU executor runs (server.cpp), so its
// ranges count as page-locked host memory here.
#pragma once

#include <cstddef>
#include <span>

#include "ferry/session/caller_memory.hpp"
#include "serve/execution/executor.hpp"

namespace ferry::serve {

enum class input_route {
  gather_on_host,    // every item's bytes memcpy'd into the slot's host view; the strategy moves them
  caller_host,       // a lone request's system-shm range, exactly the tensor: use_caller_input
  caller_device,     // a lone request's CUDA-shm range, exactly the tensor, 256-byte aligned:
                     // use_caller_input binds the engine to it in place
  gather_on_device,  // some item is in shared memory but the run is merged, padded, misaligned or
                     // refused in place: filling_slot::gather_input copies each item's range to
                     // its offset in stream order (a DMA from a system region, device-to-device
                     // from a CUDA one) and zero-fills the padding
};

// What caller memory input `index` of `item` is, as the session's rule sees it.
[[nodiscard]] caller_memory input_memory(const batch_item& item, std::size_t index);

// The route of input `index` for a run whose engine tensor is `spec` on a slot described by `slot`
// (with that input's own strategy: tensors may go by different ones).
[[nodiscard]] input_route route_input(std::span<const batch_item> batch, std::size_t index, const tensor_spec& spec,
                                      const slot_facts& slot);

// A CUDA region is read on the GPU the run is on (no peer reads behind the client's back).
// Throws invalid_argument naming the tensor, the region and both GPUs when an input of the batch
// lives on a GPU other than `device`.
void check_cuda_inputs_on(std::span<const batch_item> batch, int device);

}  // namespace ferry::serve
