// The per-tensor state of a slot: each input and output with its spec, its buffer and what the
// current request does with it instead of the buffer (caller memory, gathers, deliveries).
// Internal to src/session.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "core/device_memory.hpp"
#include "ferry/core/stream.hpp"
#include "ferry/engines/engine.hpp"
#include "ferry/memory/buffer.hpp"
#include "ferry/session/session.hpp"
#include "session/index_guard.hpp"

namespace ferry::detail {

// An input assembled from caller ranges by copies in stream order (filling_slot::gather_input).
struct gather {
  std::vector<gather_piece> pieces;  // sorted by offset, disjoint
  std::byte* target = nullptr;       // the buffer's device memory, or the input's gather_scratch
};

// `spec` is the current request's (its batch size's, slot::select_shape); the buffer holds the
// full batch, and a request uses its first spec.bytes().
struct slot_input {
  slot_input(tensor_spec s, io_buffer b) : spec(std::move(s)), buffer(std::move(b)) {}
  tensor_spec spec;
  io_buffer buffer;
  // For the current request only (forgotten by reset()):
  const std::byte* dma_source = nullptr;  // registered caller memory copied in instead of the host view
  void* bound_address = nullptr;          // what the engine reads instead of the buffer (caller memory
                                          // in place, or gather_scratch); null: the buffer
  std::optional<gather> gathered;
  // Device memory for gathers under strategies whose buffer is host or managed memory, made the
  // first time the input is gathered and kept for the slot's life.
  std::optional<core::device_memory> gather_scratch;
  // The check of an index input's values before the engine (session_options::index_checks).
  std::optional<index_guard> guard;

  // The request feeds this input from elsewhere than its host view.
  [[nodiscard]] bool fed_by_caller() const noexcept {
    return dma_source != nullptr || bound_address != nullptr || gathered.has_value();
  }
  // Its to_device is its strategy's prefetch, which goes first on the idle stream (slot.cpp).
  [[nodiscard]] bool prefetches() const noexcept {
    return buffer.strategy() == strategy_kind::managed_prefetch && !fed_by_caller();
  }
  // Stream-ordered: the gather, the DMA from caller memory, nothing for memory read in place, or
  // the strategy's own to_device.
  void to_device(stream_ref s);
  // Where the engine reads this input for the current request.
  [[nodiscard]] void* engine_address() noexcept {
    return bound_address != nullptr ? bound_address : buffer.device_address();
  }
  // Forgets the last request's caller memory and binds the engine back to the buffer.
  void reset(engine_context& context);
};

struct slot_output {
  slot_output(tensor_spec s, io_buffer b) : spec(std::move(s)), buffer(std::move(b)) {}
  tensor_spec spec;
  io_buffer buffer;
  // For the current request only (forgotten by reset()):
  void* bound_address = nullptr;            // caller memory the engine writes in place
  std::vector<output_delivery> deliveries;  // ranges copied to caller memory after the engine
  bool host_view_wanted = true;             // to_host still runs beside the deliveries
  // Whether the host view holds the last request's result (completed_slot::output).
  bool host_view_valid = false;

  [[nodiscard]] bool prefetches() const noexcept { return buffer.strategy() == strategy_kind::managed_prefetch; }
  // Stream-ordered: the deliveries, then the strategy's to_host unless only caller memory wants it.
  void to_host(stream_ref s);
  void reset(engine_context& context);
};

}  // namespace ferry::detail
