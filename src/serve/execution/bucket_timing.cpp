#include "serve/execution/bucket_timing.hpp"

#include <fmt/format.h>

#include "core/median.hpp"
#include "ferry/core/error.hpp"
#include "serve/execution/batch_buckets.hpp"

namespace ferry::serve {

std::vector<std::chrono::nanoseconds> measure_run_times(session& s, std::span<const std::int64_t> sizes, int runs) {
  std::vector<std::chrono::nanoseconds> times;
  for (const std::int64_t rows : sizes) {
    std::vector<double> ns;
    for (int r = 0; r < runs; ++r) {
      const auto began = std::chrono::steady_clock::now();
      auto filling = s.acquire();
      filling.run_at_rows(rows);
      filling.upload_resident_inputs();
      auto done = std::move(filling).submit(stage_timing::off).wait();
      ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - began).count());
    }
    times.emplace_back(static_cast<std::int64_t>(core::median(ns)));
  }
  return times;
}

std::vector<std::int64_t> session_buckets(std::int64_t max_batch, std::span<const std::int64_t> configured,
                                          const engine& eng) {
  if (max_batch <= 0) return {};
  if (!configured.empty()) return {configured.begin(), configured.end()};
  std::vector<std::int64_t> usable;
  for (const std::int64_t rows : default_batch_buckets(max_batch)) {
    std::vector<shape_binding> inputs;
    for (const auto& t : eng.io())
      if (t.role == tensor_role::input) {
        inputs.push_back({t.name, t.shape});
        inputs.back().dims.front() = rows;
      }
    try {
      (void)eng.resolve(inputs);
      usable.push_back(rows);
    } catch (const invalid_argument&) {
      if (rows == max_batch) throw;  // the full batch the sessions bind: its refusal is the load's
    }
  }
  return usable;
}

std::string describe_buckets(std::span<const std::int64_t> sizes, std::span<const std::chrono::nanoseconds> run_times) {
  std::string rows, times;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    rows += fmt::format("{}{}", i == 0 ? "" : ", ", sizes[i]);
    if (i < run_times.size())
      times += fmt::format("{}{:.3g}", i == 0 ? "" : ", ", static_cast<double>(run_times[i].count()) / 1e6);
  }
  return fmt::format("batch buckets {}{}", rows, times.empty() ? "" : " (" + times + " ms a run)");
}

}  // namespace ferry::serve
