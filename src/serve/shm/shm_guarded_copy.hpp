// Copies to and from a client's system shared-memory region, which the client can shrink
// (ftruncate) at any moment, also in the middle of a copy.
//
// A request's ranges are checked against the object's current size when it is resolved
// (shm_registry::lookup, with fstat on the descriptor the registry keeps), which catches every
// object shrunk before the request arrived with a clear message. That check cannot close the race:
// a truncation between it and the copy unmaps the pages past the object's new end, and touching
// them raises SIGBUS, which by default kills the process. Nothing on the server's side can forbid
// the truncation: seals (F_SEAL_SHRINK) exist only for memfd objects, and neither MAP_POPULATE
// nor mlock keeps a truncated page mapped. So the copy itself survives the fault: it runs under a
// SIGBUS handler that, for a fault inside the copy's client range on the copying thread, jumps
// back out of the copy (sigsetjmp/siglongjmp), and the copy reports that the region shrank.
//
// Jumping out is safe only because the code jumped over is a plain copy: no lock, allocation or
// destructor can be skipped. Every other SIGBUS goes to the handler installed before (by default
// the process still dies, as it should for a fault that is not a client's doing).
#pragma once

#include <cstddef>
#include <span>

namespace ferry::serve {

enum class copy_method {
  ordinary,   // memcpy
  streaming,  // non-temporal stores (ferry/memory/streaming_copy.hpp), for bytes a DMA reads next
};

// Copies `source` into `destination` (same size), one of them in a client's shared-memory region.
// Returns false, with `destination` partly written, when that region's object shrank under the
// copy (a SIGBUS inside the client's range); true when every byte was copied.
[[nodiscard]] bool copy_from_client_memory(std::span<std::byte> destination, std::span<const std::byte> source,
                                           copy_method method = copy_method::ordinary);
[[nodiscard]] bool copy_to_client_memory(std::span<std::byte> destination, std::span<const std::byte> source);

}  // namespace ferry::serve
