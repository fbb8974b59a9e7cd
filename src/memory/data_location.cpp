#include "ferry/memory/data_location.hpp"

#include <cuda_runtime_api.h>

#include "ferry/core/error.hpp"

namespace ferry {

std::optional<int> gpu_holding(const pointer_facts& facts) noexcept {
  switch (facts.memory) {
    case pointer_facts::kind::host:
      return std::nullopt;
    case pointer_facts::kind::device:
      if (facts.device >= 0) return facts.device;
      return std::nullopt;
    case pointer_facts::kind::managed:
      if (facts.last_prefetch >= 0) return facts.last_prefetch;
      if (facts.last_prefetch == cudaCpuDeviceId) return std::nullopt;  // sent to the host last
      if (facts.preferred_location >= 0) return facts.preferred_location;
      return std::nullopt;
  }
  return std::nullopt;
}

pointer_facts query_pointer(const void* data, std::size_t bytes) {
  cudaPointerAttributes attributes{};
  FERRY_CUDA_TRY(cudaPointerGetAttributes(&attributes, data));
  pointer_facts facts;
  switch (attributes.type) {
    case cudaMemoryTypeUnregistered:
    case cudaMemoryTypeHost:
      return facts;
    case cudaMemoryTypeDevice:
      facts.memory = pointer_facts::kind::device;
      facts.device = attributes.device;
      return facts;
    case cudaMemoryTypeManaged:
      facts.memory = pointer_facts::kind::managed;
      FERRY_CUDA_TRY(cudaMemRangeGetAttribute(&facts.last_prefetch, sizeof(int),
                                              cudaMemRangeAttributeLastPrefetchLocation, data, bytes));
      FERRY_CUDA_TRY(cudaMemRangeGetAttribute(&facts.preferred_location, sizeof(int),
                                              cudaMemRangeAttributePreferredLocation, data, bytes));
      return facts;
  }
  return facts;
}

std::optional<int> gpu_holding(const void* data, std::size_t bytes) { return gpu_holding(query_pointer(data, bytes)); }

}  // namespace ferry
