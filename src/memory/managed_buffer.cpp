#include "memory/managed_buffer.hpp"

#include <string>

#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/memory/strategy.hpp"

namespace ferry::memory {
namespace {
cudaMemLocation device_location(int ordinal) {
  cudaMemLocation loc{};
  loc.type = cudaMemLocationTypeDevice;
  loc.id = ordinal;
  return loc;
}
cudaMemLocation host_location() {
  cudaMemLocation loc{};
  loc.type = cudaMemLocationTypeHost;
  loc.id = 0;
  return loc;
}

void advise_host_resident(void* pointer, std::size_t bytes, int ordinal) {
  FERRY_CUDA_TRY(cudaMemAdvise(pointer, bytes, cudaMemAdviseSetPreferredLocation, host_location()));
  FERRY_CUDA_TRY(cudaMemAdvise(pointer, bytes, cudaMemAdviseSetAccessedBy, device_location(ordinal)));
}

void prefetch_to_device(void* pointer, std::size_t bytes, int ordinal, stream_ref s) {
  FERRY_CUDA_TRY(cudaMemPrefetchAsync(pointer, bytes, device_location(ordinal), 0, s.get()));
}

void prefetch_to_host(void* pointer, std::size_t bytes, stream_ref s) {
  FERRY_CUDA_TRY(cudaMemPrefetchAsync(pointer, bytes, host_location(), 0, s.get()));
}

}  // namespace

managed_buffer::managed_buffer(core::managed_memory memory, managed_mode mode, direction dir, int ordinal)
    : memory_(std::move(memory)), mode_(mode), dir_(dir), ordinal_(ordinal) {
  const bool output_only = dir_ == direction::output;
  if (mode_ == managed_mode::advise || (mode_ == managed_mode::prefetch && output_only))
    advise_host_resident(memory_.get(), memory_.size(), ordinal_);
}

void managed_buffer::to_device(stream_ref s, std::size_t bytes) {
  if (mode_ != managed_mode::prefetch || !moves_in(dir_)) return;
  prefetch_to_device(memory_.get(), bytes, ordinal_, s);
}

void managed_buffer::to_host(stream_ref s, std::size_t bytes) {
  // Only inout tensors come back by prefetch: outputs are already in host pages (see header).
  if (mode_ != managed_mode::prefetch || dir_ != direction::inout) return;
  prefetch_to_host(memory_.get(), bytes, s);
}

core::managed_memory allocate_managed_within_free(std::string_view strategy, const buffer_request& request,
                                                  int ordinal) {
  if (auto refusal = managed_request_refusal(request.bytes, query_free_memory(ordinal), request.managed_policy))
    throw unsupported("strategy '" + std::string(strategy) + "': " + *refusal);
  return core::allocate_managed(request.bytes);
}

}  // namespace ferry::memory
