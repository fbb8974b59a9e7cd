#include "ferry/device/link_bandwidth.hpp"
#include "ferry/core/byte_size.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/device_memory.hpp"
#include "core/pinned_memory.hpp"
#include "core/scoped_device.hpp"
#include "device/bandwidth_summary.hpp"
#include "ferry/core/error.hpp"
#include "ferry/core/stream.hpp"
#include "ferry/device/device_caps.hpp"

namespace ferry {
namespace {

// Below this a copy is dominated by fixed overheads and would not measure the link at all.
constexpr std::size_t minimum_bytes = std::size_t{8} << 20;

enum class copy_direction { host_to_device, device_to_host };

using series_summary = device::bandwidth_summary;

// Warm-up copies first, then one timed copy per event pair. Each copy is timed on its own (not
// a batch divided by the count) so the median and best describe single copies, as a request
// would see them.
series_summary time_copies(copy_direction dir, void* host, void* device, std::size_t bytes,
                           const link_bandwidth_options& options, const stream& s) {
  const cudaMemcpyKind kind = dir == copy_direction::host_to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  void* dst = dir == copy_direction::host_to_device ? device : host;
  const void* src = dir == copy_direction::host_to_device ? host : device;

  for (int i = 0; i < options.warmup_copies; ++i) FERRY_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, kind, s.get()));
  s.synchronize_blocking();

  event start(event_timing::enabled);
  event stop(event_timing::enabled);
  std::vector<double> gbps;
  gbps.reserve(static_cast<std::size_t>(options.repetitions));
  for (int i = 0; i < options.repetitions; ++i) {
    start.record(s);
    FERRY_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, kind, s.get()));
    stop.record(s);
    stop.synchronize_blocking();
    const double seconds = static_cast<double>(elapsed_ms(start, stop)) * 1e-3;
    gbps.push_back(static_cast<double>(bytes) / seconds / 1e9);
  }
  return device::summarize_bandwidth(gbps);
}

}  // namespace

link_bandwidth measure_link_bandwidth_blocking(int ordinal, const link_bandwidth_options& options) {
  if (options.repetitions < 1) throw invalid_argument("link bandwidth: repetitions must be at least 1");
  if (options.warmup_copies < 0) throw invalid_argument("link bandwidth: warm-up copies must not be negative");
  // query_device validates the ordinal and reports a missing GPU as no_device.
  const device_caps caps = query_device(ordinal);

  core::scoped_device on_device(ordinal);
  const std::size_t free_bytes = query_free_memory(ordinal);
  const std::size_t bytes = std::min(options.bytes, free_bytes / 4);
  if (bytes < minimum_bytes)
    throw unsupported("link bandwidth on GPU " + std::to_string(ordinal) + " (" + caps.name + "): only " +
                      format_byte_size(free_bytes) +
                      " of device memory free; measuring needs a quarter of free memory to be at least " +
                      format_byte_size(minimum_bytes));

  // cudaHostAllocDefault is exactly cudaMallocHost: page-locked, not mapped, not write-combined.
  const core::pinned_memory host = core::allocate_pinned(bytes, cudaHostAllocDefault);
  const core::device_memory device = core::allocate_device(bytes);
  // Touch every host page so first-use costs stay out of the warm-up, and give the device
  // buffer defined contents.
  std::memset(host.get(), 0x5a, bytes);
  const stream s;
  FERRY_CUDA_TRY(cudaMemsetAsync(device.get(), 0, bytes, s.get()));

  const series_summary h2d = time_copies(copy_direction::host_to_device, host.get(), device.get(), bytes, options, s);
  const series_summary d2h = time_copies(copy_direction::device_to_host, host.get(), device.get(), bytes, options, s);
  return {h2d.median_gbps, h2d.best_gbps, d2h.median_gbps, d2h.best_gbps, bytes, options.repetitions};
}

}  // namespace ferry
