// Renderings of placement_cost results: plain C++, no CUDA.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/report/report_cells.hpp"
#include "ferry/bench/placement_cost.hpp"

namespace ferry::bench {

namespace {
nlohmann::json stats_json(const sample_stats& s) {
  return {{"count", s.count}, {"median", s.median}, {"p90", s.p90}, {"p99", s.p99},
          {"min", s.min},     {"max", s.max},       {"iqr", s.iqr}, {"mean", s.mean}};
}
nlohmann::json optional_stats_json(const std::optional<sample_stats>& s) {
  return s ? stats_json(*s) : nlohmann::json(nullptr);
}

// The local run of the same engine and data GPU, whose median a remote run is compared with.
const placement_cost* local_of(std::span<const placement_cost> results, const placement_cost& r) {
  for (const auto& other : results)
    if (other.engine == r.engine && other.input_bytes == r.input_bytes && other.data_device == r.data_device &&
        other.run_device == other.data_device)
      return &other;
  return nullptr;
}
}  // namespace

std::string render_placement_table(std::span<const placement_cost> results) {
  std::string out =
      fmt::format("{:<16} {:>8} {:>6} {:>6} {:>11} {:>11} {:>11} {:>11} {:>13}  {}\n", "engine", "input", "data", "run",
                  "total µs", "peer in µs", "compute µs", "peer out µs", "away costs", "check");
  for (const auto& r : results) {
    const auto* local = local_of(results, r);
    std::string away = "-";
    if (r.run_device != r.data_device && local != nullptr && local->total_us.median > 0)
      away = fmt::format("+{} µs ({:.1f}x)", cells::format_us(r.total_us.median - local->total_us.median),
                         r.total_us.median / local->total_us.median);
    out += fmt::format(
        "{:<16} {:>8} {:>6} {:>6} {:>11} {:>11} {:>11} {:>11} {:>13}  {}\n", r.engine,
        cells::human_bytes(r.input_bytes), fmt::format("GPU {}", r.data_device), fmt::format("GPU {}", r.run_device),
        cells::format_us(r.total_us.median), r.peer_in_us ? cells::format_us(r.peer_in_us->median) : "-",
        cells::format_us(r.compute_us.median), r.peer_out_us ? cells::format_us(r.peer_out_us->median) : "-", away,
        r.outputs_match ? "✓" : "✗ " + r.check_detail);
  }
  return out;
}

nlohmann::json placement_costs_to_json(std::span<const placement_cost> results) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : results) {
    list.push_back({{"engine", r.engine},
                    {"input_bytes", r.input_bytes},
                    {"output_bytes", r.output_bytes},
                    {"data_device", r.data_device},
                    {"run_device", r.run_device},
                    {"total_us", stats_json(r.total_us)},
                    {"peer_in_us", optional_stats_json(r.peer_in_us)},
                    {"peer_out_us", optional_stats_json(r.peer_out_us)},
                    {"compute_us", stats_json(r.compute_us)},
                    {"outputs_match", r.outputs_match},
                    {"check_detail", r.check_detail}});
  }
  return {{"placement_costs", std::move(list)}};
}

}  // namespace ferry::bench
