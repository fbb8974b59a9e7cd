// The CSV rendering: one flat row per result for spreadsheets and data frames. Header and rows
// come from the same list of (name, value) fields, so they cannot disagree on the column count.
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (moved here in newer fmt)

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/bench/report.hpp"
#include "ferry/device_set.hpp"

namespace ferry::bench {

namespace {

using csv_fields = std::vector<std::pair<std::string, std::string>>;

// Shortest text that reads back as the same double.
std::string number(double value) { return fmt::format("{}", value); }
std::string number(std::uint64_t value) { return fmt::format("{}", value); }
std::string number(int value) { return fmt::format("{}", value); }
std::string flag(bool value) { return value ? "true" : "false"; }

csv_fields stats_fields(std::string_view series, const sample_stats& s) {
  csv_fields fields;
  const auto add = [&](std::string_view member, std::string value) {
    fields.emplace_back(fmt::format("{}_{}", series, member), std::move(value));
  };
  add("count", number(std::uint64_t{s.count}));
  add("median", number(s.median));
  add("p90", number(s.p90));
  add("p99", number(s.p99));
  add("min", number(s.min));
  add("max", number(s.max));
  add("iqr", number(s.iqr));
  add("mean", number(s.mean));
  return fields;
}

// Every field of a result, in bench_result.hpp order; absent optionals become empty cells.
csv_fields fields_of(const strategy_result& r) {
  csv_fields f;
  f.emplace_back("strategy", r.strategy);
  f.emplace_back("engine", r.engine);
  f.emplace_back("input_bytes", number(std::uint64_t{r.input_bytes}));
  f.emplace_back("output_bytes", number(std::uint64_t{r.output_bytes}));
  f.emplace_back("inflight", number(r.inflight));
  f.emplace_back("clients", number(r.clients));
  f.emplace_back("devices", format_device_set(r.devices));
  f.emplace_back("graph", flag(r.graph));
  f.emplace_back("warmed_up", flag(r.warmed_up));
  f.emplace_back("input_writes", r.input_writes);
  f.emplace_back("refused", r.refused.value_or(""));
  f.emplace_back("failed", flag(r.failed));
  f.emplace_back("iterations", number(std::uint64_t{r.iterations}));
  f.emplace_back("wall_seconds", number(r.wall_seconds));
  for (const auto& [series, stats] : {std::pair{"latency_us", &r.latency_us}, std::pair{"fill_us", &r.fill_us},
                                      std::pair{"h2d_us", &r.h2d_us}, std::pair{"compute_us", &r.compute_us},
                                      std::pair{"d2h_us", &r.d2h_us}, std::pair{"enqueue_us", &r.enqueue_us}}) {
    const csv_fields more = stats_fields(series, *stats);
    f.insert(f.end(), more.begin(), more.end());
  }
  f.emplace_back("cold_first_us", number(r.cold_first_us));
  f.emplace_back("cold_first_percentile", number(r.cold_first_percentile));
  f.emplace_back("throughput_per_s", number(r.throughput_per_s));
  f.emplace_back("h2d_gbps", number(r.h2d_gbps));
  f.emplace_back("d2h_gbps", number(r.d2h_gbps));
  f.emplace_back("relative_iqr", number(r.relative_iqr));
  f.emplace_back("noise", number(r.noise));
  f.emplace_back("throughput_noise", number(r.throughput_noise));
  f.emplace_back("trial_noise", number(r.trial_noise));
  f.emplace_back("throughput_trial_noise", number(r.throughput_trial_noise));
  // Each trial's figures, "; "-separated in trial order (a cell has a handful of trials).
  f.emplace_back("trials", number(std::uint64_t{r.trials.size()}));
  const auto per_trial = [&r](auto member) {
    std::vector<std::string> values;
    for (const trial_figures& t : r.trials) values.push_back(number(t.*member));
    return fmt::format("{}", fmt::join(values, "; "));
  };
  f.emplace_back("trial_started_seconds", per_trial(&trial_figures::started_seconds));
  f.emplace_back("trial_wall_seconds", per_trial(&trial_figures::wall_seconds));
  f.emplace_back("trial_iterations", per_trial(&trial_figures::iterations));
  f.emplace_back("trial_median_us", per_trial(&trial_figures::median_us));
  f.emplace_back("trial_noise_each", per_trial(&trial_figures::noise));
  f.emplace_back("trial_throughput_per_s", per_trial(&trial_figures::throughput_per_s));
  f.emplace_back("trial_throughput_noise", per_trial(&trial_figures::throughput_noise));
  f.emplace_back("schedule", r.schedule);
  f.emplace_back("max_noise", number(r.max_noise));
  f.emplace_back("noisy", flag(r.noisy));
  f.emplace_back("stopped", r.stopped);
  f.emplace_back("device_bytes_used", number(std::uint64_t{r.device_bytes_used}));
  for (const auto& entry : {std::pair{"recipe", &r.recipe}, std::pair{"floor", &r.floor}}) {
    const std::string_view name = entry.first;
    const bool present = entry.second->has_value();
    const auto add = [&f, name, present](std::string_view member, std::string value) {
      f.emplace_back(fmt::format("{}_{}", name, member), present ? std::move(value) : "");
    };
    const side_run empty;
    const side_run& s = present ? **entry.second : empty;
    add("steps", s.steps);
    add("iterations", number(std::uint64_t{s.iterations}));
    add("latency_us_median", number(s.latency_us.median));
    add("latency_us_p90", number(s.latency_us.p90));
    add("latency_us_p99", number(s.latency_us.p99));
    add("noise", number(s.noise));
    add("output_checked", flag(s.output_checked));
    add("output_matches", flag(s.output_matches));
  }
  f.emplace_back("recipe_note", r.recipe_note);
  {
    const clock_record empty;
    const clock_record& c = r.clocks ? *r.clocks : empty;
    const auto add = [&](std::string_view member, std::string value) {
      f.emplace_back(fmt::format("clocks_{}", member), r.clocks ? std::move(value) : "");
    };
    add("sm_mhz_min", number(std::uint64_t{c.sm_mhz_min}));
    add("sm_mhz_max", number(std::uint64_t{c.sm_mhz_max}));
    add("mem_mhz_min", number(std::uint64_t{c.mem_mhz_min}));
    add("mem_mhz_max", number(std::uint64_t{c.mem_mhz_max}));
    add("throttle_reasons", fmt::format("{}", fmt::join(c.throttle_reasons, "; ")));
    add("changed", flag(c.changed));
  }
  f.emplace_back("clocks_note", r.clocks_note);
  f.emplace_back("host_probe_us", number(r.host_probe_us));
  f.emplace_back("host_probe_spread", number(r.host_probe_spread));
  f.emplace_back("cuda_probe_us", number(r.cuda_probe_us));
  f.emplace_back("cuda_probe_spread", number(r.cuda_probe_spread));
  f.emplace_back("output_checked", flag(r.output_checked));
  f.emplace_back("output_matches", flag(r.output_matches));
  f.emplace_back("check_detail", r.check_detail);
  f.emplace_back("notes", fmt::format("{}", fmt::join(r.notes, "; ")));
  const auto um_field = [&](std::string_view name, auto member) {
    f.emplace_back(fmt::format("um_{}", name), r.um ? number(std::uint64_t{(*r.um).*member}) : "");
  };
  um_field("bytes_host_to_device", &um_traffic::bytes_host_to_device);
  um_field("bytes_device_to_host", &um_traffic::bytes_device_to_host);
  um_field("gpu_page_faults", &um_traffic::gpu_page_faults);
  um_field("cpu_page_faults", &um_traffic::cpu_page_faults);
  f.emplace_back("um_note", r.um_note);
  return f;
}

// RFC 4180: a field with a comma, quote or line break is quoted, and its quotes doubled.
std::string quote(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

template <class Pick>
std::string csv_line(const csv_fields& fields, Pick pick) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line += ',';
    line += quote(pick(fields[i]));
  }
  return line + "\n";
}

}  // namespace

std::string render_csv(const bench_report& report) {
  // The header comes from a default result, so a report without results still has one.
  std::string out = csv_line(fields_of(strategy_result{}), [](const auto& f) { return f.first; });
  for (const strategy_result& r : report.results) {
    out += csv_line(fields_of(r), [](const auto& f) { return f.second; });
  }
  return out;
}

}  // namespace ferry::bench
