// Looking up a request's shared-memory tensors, before it is queued: each input's data and each
// requested output's destination become the checked range of its region, system or CUDA, and
// every region used stays pinned (mapped, its IPC handle open) until the request is answered.
// Protocol-neutral: HTTP and gRPC requests go through the same code.
#pragma once

#include <memory>
#include <vector>

#include "serve/vocabulary/inference.hpp"
#include "serve/vocabulary/model_signature.hpp"

namespace ferry::serve {

class shm_registry;
class cuda_shm_registry;

// Whether any input or output of the request names a shared-memory region.
[[nodiscard]] bool uses_shared_memory(const infer_request& request);

// Points every shared-memory input's data at its range (device memory, with cuda_device set, for
// a CUDA region) and returns in `outputs` one destination per entry of request.outputs (empty for
// outputs returned in the response). `cuda` may be null (no CUDA regions). Regions are looked up
// among request.client's own. Throws request_error: not_found for a region the client has
// registered nowhere, forbidden for a system region asked by a client not on this machine, bad_request for a range
// outside its region or a name registered both as a system and as a CUDA region (ambiguous).
void resolve_shared_memory(infer_request& request, const shm_registry& system, const cuda_shm_registry* cuda,
                           std::vector<output_destination>& outputs, std::vector<std::shared_ptr<const void>>& pins);

// Checks that every shared-memory output range can hold its output. Throws request_error(bad_request).
void check_output_ranges(const model_signature& signature, const request_plan& plan, const infer_request& request,
                         const std::vector<output_destination>& outputs);

}  // namespace ferry::serve
