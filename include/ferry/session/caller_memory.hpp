// The one rule for whether a slot may use a caller's memory in place of its own buffer for a
// tensor: read an input from it (filling_slot::use_caller_input) or let the engine write an output
// into it (filling_slot::bind_caller_output). Pure, so a server can plan its requests with it
// without a GPU (serve/input_routing.cpp), and the slot applies the same rule before binding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ferry/engines/engine.hpp"
#include "ferry/memory/strategy.hpp"

namespace ferry {

// What the caller's memory is, as far as the rule cares.
enum class caller_memory_kind {
  device,           // device memory (cudaMalloc, a CUDA IPC handle) on `device`
  registered_host,  // host memory page-locked by cudaHostRegister or cudaMallocHost
  pageable_host,    // anything else on the host: the GPU cannot reach it without a staging copy
};

struct caller_memory {
  caller_memory_kind kind = caller_memory_kind::pageable_host;
  int device = -1;             // the GPU of device memory
  std::uintptr_t address = 0;  // the address an engine would bind (host memory: its device view)
  std::size_t bytes = 0;
};

// Why caller memory cannot stand in for a slot's buffer; `unsupported` when the request is well
// formed but the session cannot do it (a strategy or a captured graph), otherwise the memory is
// wrong for the tensor (size, GPU, alignment, kind).
struct in_place_refusal {
  bool unsupported = false;
  std::string reason;
};

struct slot_facts {
  strategy_kind strategy = strategy_kind::pinned;
  int device = 0;             // the slot's GPU
  bool graph_active = false;  // the slot runs as a captured CUDA graph (fixed addresses)
};

// Input `spec` fed from `memory`: nullopt when the slot can read it without a staging copy:
//  - device memory on the slot's GPU, 256-byte aligned: the engine reads it in place, any strategy;
//  - registered host memory: copy strategies DMA from it, the device strategy copies it to device
//    memory, zero-copy strategies bind the engine to it (then it must be 256-byte aligned);
//    managed strategies cannot (their engine reads managed pages, which it is not).
[[nodiscard]] std::optional<in_place_refusal> caller_input_refusal(const tensor_spec& spec, const slot_facts& slot,
                                                                   const caller_memory& memory);

// Output `spec` written by the engine straight into `memory`: nullopt when it may be bound in
// place: device memory on the slot's GPU that is exactly the tensor and 256-byte aligned (any
// strategy: the result is born where the caller wants it), or registered host memory under a
// zero-copy strategy (the engine writes host memory anyway; now it is the caller's).
// Anything else is delivered by a copy (filling_slot::deliver_output).
[[nodiscard]] std::optional<in_place_refusal> caller_output_refusal(const tensor_spec& spec, const slot_facts& slot,
                                                                    const caller_memory& memory);

}  // namespace ferry
