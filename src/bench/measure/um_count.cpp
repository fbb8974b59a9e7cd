#include "bench/measure/um_count.hpp"

#include <thread>

#include <fmt/format.h>

#include "bench/measure/client_loop.hpp"
#include "bench/measure/output_checks.hpp"
#include "bench/measure/um_counters.hpp"
#include "ferry/bench/stopping.hpp"

namespace ferry::bench {

um_reading count_um_traffic(const cell_target& target, const run_options& options) {
  if (!options.um_counters) {
    return {.traffic = std::nullopt, .note = "unified-memory counters off (--no-um-counters)"};
  }
  constexpr std::size_t counted_requests = 16;
  auto counters = um_counter_session::start(target.devices.front());  // process-wide anyway
  if (!counters.available()) {
    return {.traffic = std::nullopt, .note = counters.reason()};
  }
  run_options extra = options;
  extra.warmup = false;  // the cell just ran: the pages are where its steady state keeps them
  output_checks no_checks(target.references, target.request_bytes, 0);
  const stop_after_count stop(counted_requests);
  client_loop counted(target, extra, no_checks, stop);
  counted.run();
  // CUPTI can deliver a flush's records late; keep taking until a take adds nothing.
  std::optional<um_traffic> total = counters.take();
  if (!total) {
    return {.traffic = std::nullopt, .note = counters.reason()};
  }
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto late = counters.take();
    if (!late || (late->bytes_host_to_device == 0 && late->bytes_device_to_host == 0 && late->gpu_page_faults == 0 &&
                  late->cpu_page_faults == 0))
      break;
    *total += *late;
  }
  const auto n = counted.samples().requests;
  um_reading reading{.traffic = um_traffic{total->bytes_host_to_device / n, total->bytes_device_to_host / n,
                                           total->gpu_page_faults / n, total->cpu_page_faults / n},
                     .note = fmt::format("per request, averaged over {} requests counted after the timed ones", n)};
  if (counters.dropped_records() > 0)
    reading.note += fmt::format("; {} CUPTI records dropped: lower bounds", counters.dropped_records());
  return reading;
}

}  // namespace ferry::bench
