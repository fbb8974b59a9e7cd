#include "ferry/device/peer_access.hpp"
#include "ferry/core/byte_size.hpp"

#include <algorithm>
#include <string>

#include <cuda_runtime_api.h>

#include "core/device_memory.hpp"
#include "core/scoped_device.hpp"
#include "device/bandwidth_summary.hpp"
#include "ferry/core/error.hpp"
#include "ferry/core/stream.hpp"
#include "ferry/device/device_caps.hpp"

namespace ferry {
namespace {

// Below this a copy measures fixed overheads, not the link (as for the host link).
constexpr std::size_t minimum_bytes = std::size_t{8} << 20;

std::string describe(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
}

// Enables access from `from` to `to`; returns why not, or "" when it is on.
std::string enable_one(int from, int to) {
  core::scoped_device on_device(from);
  const cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
  if (status == cudaSuccess) return {};
  (void)cudaGetLastError();  // clear the sticky error so the next unrelated call does not see it
  if (status == cudaErrorPeerAccessAlreadyEnabled) return {};  // on already: what we want
  return "cudaDeviceEnablePeerAccess(" + std::to_string(to) + ") on GPU " + std::to_string(from) + ": " +
         describe(status);
}

}  // namespace

std::vector<peer_link> enable_peer_access(std::span<const int> devices) {
  for (const int d : devices) (void)query_device(d);  // no_device / invalid_argument, by name
  std::vector<peer_link> links;
  for (const int from : devices) {
    for (const int to : devices) {
      if (from == to) continue;
      peer_link link;
      link.from = from;
      link.to = to;
      int can = 0;
      FERRY_CUDA_TRY(cudaDeviceCanAccessPeer(&can, from, to));
      link.can_access = can != 0;
      if (link.can_access) {
        link.error = enable_one(from, to);
        link.enabled = link.error.empty();
      }
      links.push_back(std::move(link));
    }
  }
  return links;
}

peer_bandwidth measure_peer_bandwidth_blocking(int from, int to, const peer_bandwidth_options& options) {
  if (from == to)
    throw invalid_argument("peer bandwidth: GPU " + std::to_string(from) + " to itself is not a peer copy");
  if (options.repetitions < 1) throw invalid_argument("peer bandwidth: repetitions must be at least 1");
  if (options.warmup_copies < 0) throw invalid_argument("peer bandwidth: warm-up copies must not be negative");
  (void)query_device(from);
  (void)query_device(to);
  const std::size_t free_bytes = std::min(query_free_memory(from), query_free_memory(to));
  const std::size_t bytes = std::min(options.bytes, free_bytes / 4);
  if (bytes < minimum_bytes)
    throw unsupported("peer bandwidth GPU " + std::to_string(from) + " -> " + std::to_string(to) + ": only " +
                      format_byte_size(free_bytes) +
                      " free on one of them; measuring needs a quarter of free "
                      "memory to be at least " +
                      format_byte_size(minimum_bytes));

  const core::device_memory destination = [&] {
    core::scoped_device on_device(to);
    return core::allocate_device(bytes);
  }();
  // The stream, its events and the source live on `from`, the GPU that issues the copies.
  core::scoped_device on_device(from);
  const core::device_memory source = core::allocate_device(bytes);
  const stream s;
  FERRY_CUDA_TRY(cudaMemsetAsync(source.get(), 0x5a, bytes, s.get()));
  for (int i = 0; i < options.warmup_copies; ++i)
    FERRY_CUDA_TRY(cudaMemcpyPeerAsync(destination.get(), to, source.get(), from, bytes, s.get()));
  s.synchronize_blocking();

  event start(event_timing::enabled);
  event stop(event_timing::enabled);
  std::vector<double> gbps;
  for (int i = 0; i < options.repetitions; ++i) {
    start.record(s);
    FERRY_CUDA_TRY(cudaMemcpyPeerAsync(destination.get(), to, source.get(), from, bytes, s.get()));
    stop.record(s);
    stop.synchronize_blocking();
    const double seconds = static_cast<double>(elapsed_ms(start, stop)) * 1e-3;
    gbps.push_back(static_cast<double>(bytes) / seconds / 1e9);
  }
  const auto summary = device::summarize_bandwidth(gbps);
  return {summary.median_gbps, summary.best_gbps, bytes, options.repetitions};
}

}  // namespace ferry
