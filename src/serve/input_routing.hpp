// How each input of a batch reaches the engine on a GPU, decided from the batch alone: a pure
// function, so every rule is tested without a GPU (session_executor.cpp carries the routes out).
//
// In place is best: a lone request whose shared-memory range is exactly the tensor is handed to
// filling_slot::use_caller_input, which DMAs from a registered host range (or binds it, under
// zero-copy strategies) and binds a device range (a CUDA region) with no copy at all. Anything
// else is gathered: merged requests and zero-padded rows must be laid out contiguously first.
#pragma once

#include <cstddef>
#include <span>

#include "ferry/strategy.hpp"
#include "serve/executor.hpp"

namespace ferry::serve {

enum class input_route {
  gather_on_host,    // every item's bytes memcpy'd into the slot's host view; the strategy moves them
  caller_host,       // a lone request's system-shm range, exactly the tensor: use_caller_input
  caller_device,     // a lone request's CUDA-shm range, exactly the tensor, 256-byte aligned:
                     // use_caller_input binds the engine to it in place
  gather_on_device,  // some item is in a CUDA region but the run is merged, padded or misaligned:
                     // every item copied into the executor's device buffer (device-to-device for
                     // CUDA items, host-to-device for the others), which is then bound in place
};

// The route of input `index` for a run whose engine tensor is `tensor_bytes` bytes under
// `strategy`. Host ranges are not read in place under managed strategies (their engine reads
// managed pages); device ranges are, under every strategy.
[[nodiscard]] input_route route_input(std::span<const batch_item> batch, std::size_t index, std::size_t tensor_bytes,
                                      strategy_kind strategy);

// A CUDA region is read on the GPU the run is on (no peer reads behind the client's back).
// Throws invalid_argument naming the tensor, the region and both GPUs when an input of the batch
// lives on a GPU other than `device`.
void check_cuda_inputs_on(std::span<const batch_item> batch, int device);

}  // namespace ferry::serve
