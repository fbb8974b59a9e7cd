#include "session/slot_tensors.hpp"

#include "ferry/core/error.hpp"

namespace ferry::detail {

void slot_input::to_device(stream_ref s) {
  if (gathered) {
    // Pieces were checked sorted and disjoint: zero-fill each gap, then copy each piece.
    std::byte* target = gathered->target;
    std::size_t covered = 0;
    for (const auto& p : gathered->pieces) {
      if (p.offset > covered) FERRY_CUDA_TRY(cudaMemsetAsync(target + covered, 0, p.offset - covered, s.get()));
      FERRY_CUDA_TRY(cudaMemcpyAsync(target + p.offset, p.source.data(), p.source.size(), cudaMemcpyDefault, s.get()));
      covered = p.offset + p.source.size();
    }
    // Up to the request's size: rows past a smaller batch are not read.
    if (covered < spec.bytes()) FERRY_CUDA_TRY(cudaMemsetAsync(target + covered, 0, spec.bytes() - covered, s.get()));
  } else if (bound_address != nullptr) {
    // The engine reads the caller's memory where it is.
  } else if (dma_source != nullptr) {
    FERRY_CUDA_TRY(cudaMemcpyAsync(buffer.device_address(), dma_source, spec.bytes(), cudaMemcpyHostToDevice, s.get()));
  } else {
    buffer.to_device(s, spec.bytes());
  }
}

void slot_input::reset(engine_context& context) {
  if (bound_address != nullptr) context.bind(spec.name, buffer.device_address());
  dma_source = nullptr;
  bound_address = nullptr;
  gathered.reset();
}

void slot_output::to_host(stream_ref s) {
  if (bound_address != nullptr) {
    host_view_valid = false;  // the engine wrote the caller's memory, not the slot's
    return;
  }
  // cudaMemcpyDefault: the pointers say the direction (device -> registered host is one DMA,
  // device -> device one copy on the GPU; a zero-copy or managed output is read where it lives).
  const auto* source = static_cast<const std::byte*>(buffer.device_address());
  for (const auto& d : deliveries)
    FERRY_CUDA_TRY(
        cudaMemcpyAsync(d.destination.data(), source + d.offset, d.destination.size(), cudaMemcpyDefault, s.get()));
  const bool fetch = deliveries.empty() || host_view_wanted;
  if (fetch) buffer.to_host(s, spec.bytes());
  host_view_valid = fetch;
}

void slot_output::reset(engine_context& context) {
  if (bound_address != nullptr) context.bind(spec.name, buffer.device_address());
  bound_address = nullptr;
  deliveries.clear();
  host_view_wanted = true;
}

}  // namespace ferry::detail
