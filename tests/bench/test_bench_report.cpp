// The renderings of a bench_report: JSON round trip, terminal table, markdown, CSV and the plot
// script, on a synthetic report that uses every field.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/report/report_cells.hpp"
#include "ferry/bench/report.hpp"
#include "ferry/core/error.hpp"

namespace fb = ferry::bench;
namespace fs = std::filesystem;

namespace {

const std::string comma_detail = R"(first mismatch at [12]: got 1.5, want "2")";
const std::string refusal_reason = "needs pageableMemoryAccess=1 (HMM/ATS); this device reports 0";
const std::string oom_reason = "out of memory: cudaMalloc(&p, bytes) failed: out of memory (slot.cpp:12)";

fb::sample_stats stats(double median, double scale = 1.0) {
  fb::sample_stats s;
  s.count = 200;
  s.median = median;
  s.p90 = median * 1.05 * scale;
  s.p99 = median * 1.2 * scale;
  s.p999 = median * 1.4 * scale;
  s.min = median * 0.9;
  s.max = median * 1.5 * scale;
  s.iqr = median * 0.04 * scale;
  s.mean = median * 1.01;
  return s;
}

fb::strategy_result measured(std::string strategy, std::string engine, std::size_t input_bytes, double latency_us) {
  fb::strategy_result r;
  r.identity.strategy = ferry::parse_strategy(strategy);
  r.identity.engine = std::move(engine);
  r.identity.input_bytes = input_bytes;
  r.identity.output_bytes = input_bytes / 4 + 3;
  r.figures.iterations = 200;
  r.figures.wall_seconds = 0.75;
  r.figures.latency_us = stats(latency_us);
  r.figures.fill_us = stats(latency_us / 7);
  r.figures.h2d_us = stats(latency_us / 2);
  r.figures.compute_us = stats(latency_us / 3);
  r.figures.d2h_us = stats(latency_us / 5);
  r.figures.cold_first_us = latency_us * 9.25;
  r.figures.cold_first_percentile = 100;
  r.figures.throughput_per_s = 1e6 / latency_us;
  r.figures.h2d_gbps = static_cast<double>(input_bytes) / (latency_us / 2) / 1e3;
  r.figures.d2h_gbps = static_cast<double>(r.identity.output_bytes) / (latency_us / 5) / 1e3;
  r.figures.relative_iqr = 0.04;
  r.figures.noise = 0.004;
  r.figures.throughput_noise = 0.004;
  r.verdict.max_noise = 0.01;
  r.verdict.stopped = "200 requests in 0.75 s, median noise 0.40%";
  r.figures.enqueue_us = stats(latency_us / 20);
  r.figures.gpu_us = stats(latency_us * 0.8);
  r.figures.gpu_noise = 0.0012;
  r.figures.gpu_trial_noise = 0.0009;
  r.diagnostics.host_copy_gbps = 11.5;
  r.diagnostics.host_copy_spread = 0.04;
  r.diagnostics.host_probe_us = 20.5;
  r.diagnostics.host_probe_spread = 0.02;
  r.diagnostics.cuda_probe_us = 8.5;
  r.diagnostics.cuda_probe_spread = 0.05;
  r.verdict.output_checked = true;
  r.verdict.output_matches = true;
  r.verdict.check_detail = "compared 4096 elements";
  r.diagnostics.um_note = "not a managed strategy";
  r.figures.trials = {{.started_seconds = 0.5,
                       .wall_seconds = 0.25,
                       .iterations = 70,
                       .median_us = latency_us * 0.99,
                       .noise = 0.006,
                       .gpu_median_us = latency_us * 0.8,
                       .throughput_per_s = 1e6 / latency_us,
                       .throughput_noise = 0.006},
                      {.started_seconds = 30.25,
                       .wall_seconds = 0.25,
                       .iterations = 65,
                       .median_us = latency_us * 1.01,
                       .noise = 0.007,
                       .throughput_per_s = 0.99e6 / latency_us,
                       .throughput_noise = 0.007},
                      {.started_seconds = 61.0,
                       .wall_seconds = 0.25,
                       .iterations = 65,
                       .median_us = latency_us,
                       .noise = 0.005,
                       .throughput_per_s = 1.01e6 / latency_us,
                       .throughput_noise = 0.005}};
  r.figures.trial_noise = 0.0058;
  r.figures.throughput_trial_noise = 0.0061;
  r.identity.schedule = "interleaved";
  r.figures.device_bytes_used = 3u << 20;
  return r;
}

// Every field set to something other than its default, at least once across the results.
fb::bench_report full_report() {
  fb::bench_report report;
  report.date = "2025-06-01T12:34:56Z";
  report.command = "ferry bench --engine reduce --sizes 1MB,19MB --strategies all";
  report.machine = {"NVIDIA H200", "discrete-pcie", "Gen5 x16", 13000, 13000, 53.1, 54.2, 20.0, 8.0};
  report.objective = "latency";
  report.winner = "pinned";
  report.recommendation = "Use pinned: it reaches 95% of the link peak; managed without hints is 7x slower.";

  auto pinned = measured("pinned", "reduce", 19'000'000, 425.0);
  pinned.diagnostics.recipe = fb::side_run{.steps = "cudaMemcpyAsync in, engine, cudaMemcpyAsync out, synchronize",
                                           .iterations = 200,
                                           .latency_us = stats(400.0),
                                           .noise = 0.003,
                                           .output_checked = true,
                                           .output_matches = true,
                                           .check_detail = "compared 4096 elements"};
  pinned.diagnostics.floor = fb::side_run{.steps = "engine on device-resident inputs",
                                          .iterations = 200,
                                          .latency_us = stats(20.0),
                                          .noise = 0.002,
                                          .output_checked = true,
                                          .output_matches = false,
                                          .check_detail = "floor mismatch at [3]"};
  pinned.diagnostics.clocks = ferry::clock_record{.sm_mhz_min = 1755,
                                                  .sm_mhz_max = 1980,
                                                  .mem_mhz_min = 3201,
                                                  .mem_mhz_max = 3201,
                                                  .throttle_reasons = {"sw-power-cap"},
                                                  .samples = 12,
                                                  .changed = true};
  report.results.push_back(pinned);

  auto managed = measured("managed", "reduce", 19'000'000, 3120.0);
  managed.diagnostics.um = fb::um_traffic{19'000'000, 5'000'000, 4864, 1216};
  managed.diagnostics.um_note.clear();
  managed.verdict.noisy = true;
  managed.figures.relative_iqr = 0.31;
  managed.identity.inflight = 2;
  managed.identity.clients = 3;
  managed.identity.graph = true;
  managed.identity.warmed_up = false;
  managed.identity.input_writes = "cached";
  managed.diagnostics.recipe_note =
      "no recipe or floor: they run one request at a time, and this cell runs several at once";
  managed.diagnostics.clocks_note = "no GPU clock readings (NVML unavailable)";
  managed.figures.noise = 0.031;
  managed.verdict.stopped = "stopped at the 4.0 s cap with median noise 3.10%";
  managed.diagnostics.host_probe_us = 31.0;  // the host ran slower during this cell than at the start
  managed.diagnostics.cuda_probe_us = 9.0;   // and its driver calls as fast (machine: 8)
  managed.diagnostics.notes = {"graph capture failed: ran without a graph", "second note, with a comma"};
  report.results.push_back(managed);

  auto mapped = measured("mapped", "mlp:4x4096", 1'000'000, 45.5);
  mapped.figures.h2d_us = {};
  mapped.figures.h2d_gbps = 0;
  mapped.verdict.output_matches = false;
  mapped.verdict.check_detail = comma_detail;
  mapped.figures.enqueue_us = stats(40.0);  // as long as its compute (15.2 µs x 3 = 45.5): launch-bound
  mapped.figures.compute_us = stats(45.5);
  report.results.push_back(mapped);

  fb::strategy_result refused;
  refused.identity.strategy = ferry::strategy_kind::system;
  refused.identity.engine = "reduce";
  refused.identity.input_bytes = 19'000'000;
  refused.verdict.refuse(refusal_reason);
  report.results.push_back(refused);

  // A cell whose trial ran out of memory: failed, with the reason, the run went on.
  fb::strategy_result failed;
  failed.identity.strategy = ferry::strategy_kind::registered;
  failed.identity.engine = "reduce";
  failed.identity.input_bytes = 19'000'000;
  failed.verdict.fail(oom_reason);
  failed.identity.schedule = "interleaved";
  report.results.push_back(failed);
  return report;
}

void expect_same(const fb::sample_stats& a, const fb::sample_stats& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.median, b.median);
  EXPECT_EQ(a.p90, b.p90);
  EXPECT_EQ(a.p99, b.p99);
  EXPECT_EQ(a.p999, b.p999);
  EXPECT_EQ(a.min, b.min);
  EXPECT_EQ(a.max, b.max);
  EXPECT_EQ(a.iqr, b.iqr);
  EXPECT_EQ(a.mean, b.mean);
}

// Field by field, so a field that to_json forgets fails here even if the JSON compares equal.
void expect_same(const fb::strategy_result& a, const fb::strategy_result& b) {
  SCOPED_TRACE(std::string(fb::strategy_name(a.identity.strategy)) + " / " + a.identity.engine);
  EXPECT_EQ(a.identity.strategy, b.identity.strategy);
  EXPECT_EQ(a.identity.engine, b.identity.engine);
  EXPECT_EQ(a.identity.input_bytes, b.identity.input_bytes);
  EXPECT_EQ(a.identity.output_bytes, b.identity.output_bytes);
  EXPECT_EQ(a.identity.inflight, b.identity.inflight);
  EXPECT_EQ(a.identity.clients, b.identity.clients);
  EXPECT_EQ(a.identity.graph, b.identity.graph);
  EXPECT_EQ(a.identity.warmed_up, b.identity.warmed_up);
  EXPECT_EQ(a.identity.input_writes, b.identity.input_writes);
  EXPECT_EQ(a.verdict.outcome, b.verdict.outcome);
  EXPECT_EQ(a.figures.iterations, b.figures.iterations);
  EXPECT_EQ(a.figures.wall_seconds, b.figures.wall_seconds);
  expect_same(a.figures.latency_us, b.figures.latency_us, "latency_us");
  expect_same(a.figures.fill_us, b.figures.fill_us, "fill_us");
  expect_same(a.figures.h2d_us, b.figures.h2d_us, "h2d_us");
  expect_same(a.figures.compute_us, b.figures.compute_us, "compute_us");
  expect_same(a.figures.d2h_us, b.figures.d2h_us, "d2h_us");
  expect_same(a.figures.enqueue_us, b.figures.enqueue_us, "enqueue_us");
  expect_same(a.figures.gpu_us, b.figures.gpu_us, "gpu_us");
  EXPECT_EQ(a.figures.gpu_noise, b.figures.gpu_noise);
  EXPECT_EQ(a.figures.gpu_trial_noise, b.figures.gpu_trial_noise);
  EXPECT_EQ(a.figures.cold_first_us, b.figures.cold_first_us);
  EXPECT_EQ(a.figures.cold_first_percentile, b.figures.cold_first_percentile);
  EXPECT_EQ(a.figures.throughput_per_s, b.figures.throughput_per_s);
  EXPECT_EQ(a.figures.h2d_gbps, b.figures.h2d_gbps);
  EXPECT_EQ(a.figures.d2h_gbps, b.figures.d2h_gbps);
  EXPECT_EQ(a.figures.relative_iqr, b.figures.relative_iqr);
  EXPECT_EQ(a.figures.noise, b.figures.noise);
  EXPECT_EQ(a.figures.throughput_noise, b.figures.throughput_noise);
  EXPECT_EQ(a.figures.trial_noise, b.figures.trial_noise);
  EXPECT_EQ(a.figures.throughput_trial_noise, b.figures.throughput_trial_noise);
  ASSERT_EQ(a.figures.trials.size(), b.figures.trials.size());
  for (std::size_t i = 0; i < a.figures.trials.size(); ++i) {
    EXPECT_EQ(a.figures.trials[i].started_seconds, b.figures.trials[i].started_seconds);
    EXPECT_EQ(a.figures.trials[i].wall_seconds, b.figures.trials[i].wall_seconds);
    EXPECT_EQ(a.figures.trials[i].iterations, b.figures.trials[i].iterations);
    EXPECT_EQ(a.figures.trials[i].median_us, b.figures.trials[i].median_us);
    EXPECT_EQ(a.figures.trials[i].noise, b.figures.trials[i].noise);
    EXPECT_EQ(a.figures.trials[i].gpu_median_us, b.figures.trials[i].gpu_median_us);
    EXPECT_EQ(a.figures.trials[i].throughput_per_s, b.figures.trials[i].throughput_per_s);
    EXPECT_EQ(a.figures.trials[i].throughput_noise, b.figures.trials[i].throughput_noise);
  }
  EXPECT_EQ(a.identity.schedule, b.identity.schedule);
  EXPECT_EQ(a.figures.device_bytes_used, b.figures.device_bytes_used);
  EXPECT_EQ(a.verdict.max_noise, b.verdict.max_noise);
  EXPECT_EQ(a.verdict.noisy, b.verdict.noisy);
  EXPECT_EQ(a.verdict.stopped, b.verdict.stopped);
  for (const auto& [x, y] : {std::pair{&a.diagnostics.recipe, &b.diagnostics.recipe},
                             std::pair{&a.diagnostics.floor, &b.diagnostics.floor}}) {
    ASSERT_EQ(x->has_value(), y->has_value());
    if (!*x) continue;
    EXPECT_EQ((*x)->steps, (*y)->steps);
    EXPECT_EQ((*x)->iterations, (*y)->iterations);
    expect_same((*x)->latency_us, (*y)->latency_us, "side latency_us");
    EXPECT_EQ((*x)->noise, (*y)->noise);
    EXPECT_EQ((*x)->output_checked, (*y)->output_checked);
    EXPECT_EQ((*x)->output_matches, (*y)->output_matches);
    EXPECT_EQ((*x)->check_detail, (*y)->check_detail);
  }
  EXPECT_EQ(a.diagnostics.recipe_note, b.diagnostics.recipe_note);
  ASSERT_EQ(a.diagnostics.clocks.has_value(), b.diagnostics.clocks.has_value());
  if (a.diagnostics.clocks) {
    EXPECT_EQ(a.diagnostics.clocks->sm_mhz_min, b.diagnostics.clocks->sm_mhz_min);
    EXPECT_EQ(a.diagnostics.clocks->sm_mhz_max, b.diagnostics.clocks->sm_mhz_max);
    EXPECT_EQ(a.diagnostics.clocks->mem_mhz_min, b.diagnostics.clocks->mem_mhz_min);
    EXPECT_EQ(a.diagnostics.clocks->mem_mhz_max, b.diagnostics.clocks->mem_mhz_max);
    EXPECT_EQ(a.diagnostics.clocks->throttle_reasons, b.diagnostics.clocks->throttle_reasons);
    EXPECT_EQ(a.diagnostics.clocks->samples, b.diagnostics.clocks->samples);
    EXPECT_EQ(a.diagnostics.clocks->changed, b.diagnostics.clocks->changed);
  }
  EXPECT_EQ(a.diagnostics.clocks_note, b.diagnostics.clocks_note);
  EXPECT_EQ(a.diagnostics.host_probe_us, b.diagnostics.host_probe_us);
  EXPECT_EQ(a.diagnostics.host_probe_spread, b.diagnostics.host_probe_spread);
  EXPECT_EQ(a.diagnostics.cuda_probe_us, b.diagnostics.cuda_probe_us);
  EXPECT_EQ(a.diagnostics.cuda_probe_spread, b.diagnostics.cuda_probe_spread);
  EXPECT_EQ(a.diagnostics.host_copy_gbps, b.diagnostics.host_copy_gbps);
  EXPECT_EQ(a.diagnostics.host_copy_spread, b.diagnostics.host_copy_spread);
  EXPECT_EQ(a.verdict.output_checked, b.verdict.output_checked);
  EXPECT_EQ(a.verdict.output_matches, b.verdict.output_matches);
  EXPECT_EQ(a.verdict.check_detail, b.verdict.check_detail);
  EXPECT_EQ(a.diagnostics.notes, b.diagnostics.notes);
  ASSERT_EQ(a.diagnostics.um.has_value(), b.diagnostics.um.has_value());
  if (a.diagnostics.um) {
    EXPECT_EQ(a.diagnostics.um->bytes_host_to_device, b.diagnostics.um->bytes_host_to_device);
    EXPECT_EQ(a.diagnostics.um->bytes_device_to_host, b.diagnostics.um->bytes_device_to_host);
    EXPECT_EQ(a.diagnostics.um->gpu_page_faults, b.diagnostics.um->gpu_page_faults);
    EXPECT_EQ(a.diagnostics.um->cpu_page_faults, b.diagnostics.um->cpu_page_faults);
  }
  EXPECT_EQ(a.diagnostics.um_note, b.diagnostics.um_note);
}

void expect_same(const fb::bench_report& a, const fb::bench_report& b) {
  EXPECT_EQ(a.date, b.date);
  EXPECT_EQ(a.command, b.command);
  EXPECT_EQ(a.machine.gpu_name, b.machine.gpu_name);
  EXPECT_EQ(a.machine.platform, b.machine.platform);
  EXPECT_EQ(a.machine.pcie, b.machine.pcie);
  EXPECT_EQ(a.machine.driver_version, b.machine.driver_version);
  EXPECT_EQ(a.machine.runtime_version, b.machine.runtime_version);
  EXPECT_EQ(a.machine.link_peak_h2d_gbps, b.machine.link_peak_h2d_gbps);
  EXPECT_EQ(a.machine.link_peak_d2h_gbps, b.machine.link_peak_d2h_gbps);
  EXPECT_EQ(a.machine.host_probe_us, b.machine.host_probe_us);
  EXPECT_EQ(a.machine.cuda_probe_us, b.machine.cuda_probe_us);
  EXPECT_EQ(a.objective, b.objective);
  EXPECT_EQ(a.winner, b.winner);
  EXPECT_EQ(a.recommendation, b.recommendation);
  ASSERT_EQ(a.results.size(), b.results.size());
  for (std::size_t i = 0; i < a.results.size(); ++i) expect_same(a.results[i], b.results[i]);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return lines;
}

// Columns of a terminal line: one per UTF-8 code point.
std::size_t width_of(const std::string& line) {
  std::size_t width = 0;
  for (const char c : line) width += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return width;
}

// A minimal RFC 4180 reader, enough to check what render_csv writes.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      rows.back().push_back(std::move(field));
      field.clear();
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  if (rows.back().empty()) rows.pop_back();  // after the final newline
  return rows;
}

}  // namespace

TEST(BenchReportJson, RoundTripsEveryField) {
  const auto report = full_report();
  const std::string text = fb::to_json(report).dump(2);
  const auto back = fb::report_from_json(nlohmann::json::parse(text));
  expect_same(report, back);
  EXPECT_EQ(fb::to_json(back), fb::to_json(report));
}

TEST(BenchReportJson, OptionalsAreNullWhenAbsent) {
  const auto json = fb::to_json(full_report());
  EXPECT_EQ(json.at("schema_version"), fb::report_schema_version);
  const auto& results = json.at("results");
  EXPECT_TRUE(results.at(0).at("refused").is_null());
  EXPECT_TRUE(results.at(0).at("um").is_null());
  EXPECT_TRUE(results.at(1).at("recipe").is_null());
  EXPECT_TRUE(results.at(1).at("clocks").is_null());
  EXPECT_EQ(results.at(0).at("recipe").at("latency_us").at("median"), 400.0);
  EXPECT_EQ(results.at(1).at("um").at("gpu_page_faults"), 4864);
  EXPECT_EQ(results.at(3).at("refused"), refusal_reason);
  EXPECT_EQ(results.at(3).at("failed"), false);
  EXPECT_EQ(results.at(4).at("refused"), oom_reason);
  EXPECT_EQ(results.at(4).at("failed"), true);
  EXPECT_EQ(results.at(0).at("trials").size(), 3U);
  EXPECT_EQ(results.at(0).at("trials").at(1).at("median_us"), 425.0 * 1.01);
  EXPECT_EQ(results.at(0).at("schedule"), "interleaved");
}

TEST(BenchReportJson, MissingFieldsTakeTheirDefaults) {
  const auto report =
      fb::report_from_json(nlohmann::json::parse(R"({"winner": "pinned", "results": [{"strategy": "mapped"}]})"));
  EXPECT_EQ(report.winner, "pinned");
  ASSERT_EQ(report.results.size(), 1u);
  EXPECT_EQ(report.results[0].identity.strategy, ferry::strategy_kind::mapped);
  EXPECT_EQ(report.results[0].identity.inflight, 1);
  EXPECT_TRUE(report.results[0].identity.warmed_up);
  EXPECT_EQ(report.results[0].identity.input_writes, "cached");  // older reports: inputs were written that way
  EXPECT_TRUE(report.results[0].verdict.measured());
  EXPECT_FALSE(report.results[0].diagnostics.um);
  EXPECT_FALSE(report.results[0].diagnostics.recipe);
  EXPECT_FALSE(report.results[0].diagnostics.clocks);
  EXPECT_EQ(report.results[0].figures.noise, 0);  // older reports carry no noise figure
  EXPECT_FALSE(report.results[0].verdict.failed());
  EXPECT_TRUE(report.results[0].figures.trials.empty());  // nor trials
  EXPECT_EQ(report.results[0].figures.trial_noise, 0);
  EXPECT_EQ(report.results[0].identity.schedule, "");
  EXPECT_EQ(report.results[0].figures.gpu_us.count, 0U);  // nor the GPU's time: compare judges end to end only
  EXPECT_EQ(report.results[0].figures.gpu_noise, 0);
  EXPECT_EQ(report.results[0].diagnostics.host_copy_gbps, 0);
}

TEST(BenchReportJson, NanSurvivesAsNull) {
  auto report = full_report();
  report.results[0].figures.relative_iqr = std::nan("");
  const auto back = fb::report_from_json(nlohmann::json::parse(fb::to_json(report).dump()));
  EXPECT_TRUE(std::isnan(back.results[0].figures.relative_iqr));
}

TEST(BenchReportJson, MalformedInputThrowsInvalidArgument) {
  EXPECT_THROW((void)fb::report_from_json(nlohmann::json::parse("[1, 2]")), ferry::invalid_argument);
  EXPECT_THROW((void)fb::report_from_json(nlohmann::json::parse(R"({"results": {}})")), ferry::invalid_argument);
  EXPECT_THROW((void)fb::report_from_json(nlohmann::json::parse(R"({"results": [{"inflight": "two"}]})")),
               ferry::invalid_argument);
  EXPECT_THROW((void)fb::report_from_json(nlohmann::json::parse(R"({"schema_version": 999})")),
               ferry::invalid_argument);
  EXPECT_THROW((void)fb::report_from_json(nlohmann::json::parse(R"({"results": [{"trials": {}}]})")),
               ferry::invalid_argument);
  EXPECT_THROW((void)fb::report_from_json(nlohmann::json::parse(R"({"results": [{"trials": [3]}]})")),
               ferry::invalid_argument);
}

TEST(BenchReportTable, ShowsEveryStrategyTheRefusalAndTheWinner) {
  const auto report = full_report();
  const std::string table = fb::render_table(report);
  for (const auto& r : report.results)
    EXPECT_NE(table.find(fb::strategy_name(r.identity.strategy)), std::string::npos)
        << fb::strategy_name(r.identity.strategy);
  EXPECT_NE(table.find("refused: " + refusal_reason), std::string::npos);
  EXPECT_NE(table.find("failed: " + oom_reason), std::string::npos) << table;
  EXPECT_NE(table.find("failed: 1 of 5 cells failed, each with its reason; the run went on without them"),
            std::string::npos)
      << table;
  // The two noises side by side: within (0.4%) and between trials (0.6% over 3 trials).
  EXPECT_NE(table.find("± trials"), std::string::npos) << table;
  EXPECT_NE(table.find("0.6% (3)"), std::string::npos) << table;
  // How each group's trials ran.
  EXPECT_NE(table.find("schedule: reduce 19 MB: 2 cells interleaved: trials in rounds with the run's other cells, in a "
                       "changing order; 3 trials each, started 0.5-61.0 s into the run"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("winner (latency): pinned"), std::string::npos);
  EXPECT_NE(table.find(report.recommendation), std::string::npos);
  EXPECT_NE(table.find("19 MB"), std::string::npos);
  // Sizes as --size reads them; the rate column names what it counts, and a line says so.
  EXPECT_EQ(table.find("18.1 MB"), std::string::npos);
  EXPECT_NE(table.find("loop req/s"), std::string::npos);
  EXPECT_NE(table.find("loop req/s: requests the cell's clients completed per second, each request's input fill "
                       "included"),
            std::string::npos);
  EXPECT_NE(table.find("1 MB"), std::string::npos);
  EXPECT_NE(table.find("425.0"), std::string::npos);  // pinned median
  EXPECT_NE(table.find("3120~"), std::string::npos);  // managed median, marked noisy
  EXPECT_NE(table.find("noisy"), std::string::npos);
  EXPECT_NE(table.find("✓"), std::string::npos);
  EXPECT_NE(table.find("✗"), std::string::npos);
  EXPECT_NE(table.find(comma_detail), std::string::npos);  // the failed check explains itself
  EXPECT_NE(table.find("4864/1216"), std::string::npos);   // UM faults gpu/cpu
  EXPECT_NE(table.find("19.0/5.0"), std::string::npos);    // UM migrated MB in/out
  EXPECT_NE(table.find("[inflight 2, clients 3, graph, no warm-up, cached writes]"), std::string::npos);
  EXPECT_NE(table.find("graph capture failed: ran without a graph"), std::string::npos);
  // Noise, the recipe beside the strategy, the floor and what they say.
  EXPECT_NE(table.find("0.4%"), std::string::npos);                     // pinned's noise
  EXPECT_NE(table.find("+6.2% / +6.2%!"), std::string::npos) << table;  // 425 vs 400: past 5%
  EXPECT_NE(table.find("recipe gap: reduce / 19 MB / pinned: 6.2% slower than its recipe at the median"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("the floor's output differs from the device-resident reference: floor mismatch at [3]"),
            std::string::npos);
  EXPECT_NE(table.find("stopped at the 4.0 s cap with median noise 3.10%"), std::string::npos);
  EXPECT_NE(table.find("launch-bound: mlp:4x4096 / 1 MB / mapped"), std::string::npos) << table;
  EXPECT_NE(table.find("clocks: reduce / 19 MB / pinned: SM 1755-1980 MHz, memory 3201-3201 MHz over 12 samples; "
                       "throttled: sw-power-cap"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("recipes: no recipe or floor"), std::string::npos);
  EXPECT_NE(table.find("where the time goes:"), std::string::npos);
  // The run's typical cell (the median of 20.5, 31 and 20.5) is the yardstick.
  EXPECT_NE(
      table.find("host: reduce / 19 MB / managed [inflight 2, clients 3, graph, no warm-up, cached writes]: "
                 "against the run's typical cell, the CPU took 1.51x as long for the same work (31.0 vs 20.5 µs)"),
      std::string::npos)
      << table;
  EXPECT_EQ(table.find("host: reduce / 19 MB / pinned"), std::string::npos);  // 20.5 vs 20: the same host
}

TEST(BenchReportTable, NoRecipeGapNoteWithinTolerance) {
  auto report = full_report();
  report.results[0].diagnostics.recipe->latency_us = stats(420.0);  // 425 vs 420: +1.2%
  const std::string table = fb::render_table(report);
  EXPECT_EQ(table.find("recipe gap:"), std::string::npos) << table;
  EXPECT_NE(table.find("+1.2% / +1.2%"), std::string::npos) << table;
}

TEST(BenchReportTable, MeasuredRowsLineUpWithTheHeader) {
  const auto report = full_report();
  const auto lines = lines_of(fb::render_table(report));
  // Two tables: every measured row of each lines up with its own header.
  std::size_t tables = 0;
  for (auto header = lines.begin(); header != lines.end(); ++header) {
    if (header->rfind("engine", 0) != 0) continue;
    ++tables;
    const std::size_t width = width_of(*header);
    EXPECT_EQ(width_of(*(header + 1)), width);  // the rule under the header
    std::size_t row = 0;
    for (const auto& r : report.results) {
      if (!r.verdict.measured() && tables > 1) continue;  // refused and failed rows appear in the first table only
      const std::string& line = *(header + 2 + static_cast<std::ptrdiff_t>(row++));
      if (r.verdict.measured()) EXPECT_EQ(width_of(line), width) << line;
    }
  }
  EXPECT_EQ(tables, 2u);
}

TEST(BenchReportMarkdown, HasHeaderTableRefusalsAndWinner) {
  const auto report = full_report();
  const std::string md = fb::render_markdown(report);
  EXPECT_NE(md.find(report.date), std::string::npos);
  EXPECT_NE(md.find("`" + report.command + "`"), std::string::npos);
  EXPECT_NE(md.find("NVIDIA H200"), std::string::npos);
  EXPECT_NE(md.find("CUDA driver 13.0"), std::string::npos);
  for (const auto& r : report.results)
    EXPECT_NE(md.find(fb::strategy_name(r.identity.strategy)), std::string::npos)
        << fb::strategy_name(r.identity.strategy);
  EXPECT_NE(md.find(refusal_reason), std::string::npos);
  EXPECT_NE(md.find("## Failed\n\n- **reduce / 19 MB / registered**: " + oom_reason), std::string::npos) << md;
  EXPECT_NE(md.find("## Refused\n\n- **reduce / 19 MB / system**: " + refusal_reason), std::string::npos) << md;
  EXPECT_NE(md.find("failed: 1 of 5 cells failed"), std::string::npos) << md;
  EXPECT_NE(md.find("schedule: reduce 19 MB: 2 cells interleaved"), std::string::npos) << md;
  EXPECT_NE(md.find("**pinned**"), std::string::npos);
  EXPECT_NE(md.find(report.recommendation), std::string::npos);

  // Two tables; each one's header, alignment rule and three measured rows have the same number
  // of cells.
  std::vector<std::vector<std::string>> tables;
  bool in_table = false;
  for (const auto& line : lines_of(md)) {
    const bool row = line.rfind("|", 0) == 0;
    if (row && !in_table) tables.emplace_back();
    if (row) tables.back().push_back(line);
    in_table = row;
  }
  ASSERT_EQ(tables.size(), 2u);
  const auto cells = [](const std::string& line) { return std::count(line.begin(), line.end(), '|'); };
  for (const auto& table : tables) {
    ASSERT_EQ(table.size(), 2u + 3u);
    for (const auto& line : table) EXPECT_EQ(cells(line), cells(table[0])) << line;
  }
}

TEST(BenchReportMarkdown, EscapesPipesInCells) {
  auto report = full_report();
  report.results[0].identity.engine = "a|b";
  const std::string md = fb::render_markdown(report);
  EXPECT_NE(md.find("a\\|b"), std::string::npos);
}

TEST(BenchReportCsv, EveryRowHasEveryColumnAndCommasAreQuoted) {
  const auto report = full_report();
  const std::string csv = fb::render_csv(report);
  const auto rows = parse_csv(csv);
  ASSERT_EQ(rows.size(), 1 + report.results.size());
  const auto& header = rows[0];
  EXPECT_GE(header.size(), 60u);  // five series x eight statistics alone are 40
  for (const auto& row : rows) EXPECT_EQ(row.size(), header.size());

  const auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<std::size_t>(it - header.begin());
  };
  EXPECT_EQ(rows[3][column("check_detail")], comma_detail);
  EXPECT_NE(csv.find(R"("first mismatch at [12]: got 1.5, want ""2""")"), std::string::npos);
  EXPECT_EQ(rows[4][column("refused")], refusal_reason);
  EXPECT_EQ(rows[4][column("failed")], "false");
  EXPECT_EQ(rows[5][column("refused")], oom_reason);
  EXPECT_EQ(rows[5][column("failed")], "true");
  EXPECT_EQ(std::stod(rows[1][column("trial_noise")]), 0.0058);
  EXPECT_EQ(rows[1][column("trials")], "3");
  EXPECT_EQ(rows[1][column("trial_median_us")], fmt::format("{}; {}; {}", 425.0 * 0.99, 425.0 * 1.01, 425.0));
  EXPECT_EQ(rows[1][column("schedule")], "interleaved");
  EXPECT_EQ(rows[4][column("trials")], "0");
  EXPECT_EQ(rows[1][column("um_gpu_page_faults")], "");
  EXPECT_EQ(rows[2][column("um_gpu_page_faults")], "4864");
  EXPECT_EQ(rows[2][column("notes")], "graph capture failed: ran without a graph; second note, with a comma");
  EXPECT_EQ(std::stod(rows[1][column("latency_us_median")]), 425.0);
  EXPECT_EQ(std::stod(rows[1][column("h2d_gbps")]), report.results[0].figures.h2d_gbps);  // exact digits
  EXPECT_EQ(std::stod(rows[1][column("recipe_latency_us_median")]), 400.0);
  EXPECT_EQ(rows[2][column("recipe_latency_us_median")], "");  // no recipe: empty, not 0
  EXPECT_EQ(std::stod(rows[1][column("noise")]), 0.004);
  EXPECT_EQ(rows[1][column("clocks_throttle_reasons")], "sw-power-cap");
  EXPECT_EQ(std::stod(rows[1][column("enqueue_us_median")]), 425.0 / 20);
}

// A figure is one member and its row in the field table (ferry/bench/result.hpp): the p99.9
// latency, added that way, is in every rendering.
TEST(BenchReportFields, AFigureOfTheTableIsInEveryRendering) {
  const auto report = full_report();
  const double p999 = report.results[0].figures.latency_us.p999;
  EXPECT_EQ(fb::to_json(report).at("results").at(0).at("latency_us").at("p999"), p999);
  EXPECT_EQ(fb::report_from_json(fb::to_json(report)).results[0].figures.latency_us.p999, p999);
  const auto rows = parse_csv(fb::render_csv(report));
  const auto column = std::find(rows[0].begin(), rows[0].end(), "latency_us_p999");
  ASSERT_NE(column, rows[0].end());
  EXPECT_EQ(std::stod(rows[1][static_cast<std::size_t>(column - rows[0].begin())]), p999);
  EXPECT_NE(fb::render_table(report).find("p99.9 µs"), std::string::npos);
  EXPECT_NE(fb::render_markdown(report).find("| p99.9 µs |"), std::string::npos);
  EXPECT_NE(fb::render_table(report).find(fb::cells::format_us(p999)), std::string::npos);
}

// A derived figure is one row of its part's table, computed there: throughput_gbps, added that
// way, is in JSON, CSV, the tables, and in an older report read back (from the figures it is made of).
TEST(BenchReportFields, ADerivedFigureIsInEveryRenderingAndInOlderReports) {
  const auto report = full_report();
  const auto& r = report.results[0];
  ASSERT_GT(r.figures.throughput_per_s, 0);
  const double moved =
      static_cast<double>(r.identity.input_bytes + r.identity.output_bytes) * r.figures.throughput_per_s / 1e9;
  const auto json = fb::to_json(report);
  EXPECT_DOUBLE_EQ(json.at("results").at(0).at("throughput_gbps").get<double>(), moved);
  const auto rows = parse_csv(fb::render_csv(report));
  const auto column = std::find(rows[0].begin(), rows[0].end(), "throughput_gbps");
  ASSERT_NE(column, rows[0].end());
  EXPECT_DOUBLE_EQ(std::stod(rows[1][static_cast<std::size_t>(column - rows[0].begin())]), moved);
  EXPECT_NE(fb::render_table(report).find("moved GB/s"), std::string::npos);
  EXPECT_NE(fb::render_table(report).find(fmt::format("{:.2f}", moved)), std::string::npos);
  EXPECT_NE(fb::render_markdown(report).find("| moved GB/s |"), std::string::npos);

  // A report that predates the figure: computed on reading, not read (a stale value is ignored).
  auto older = json;
  older["results"][0].erase("throughput_gbps");
  EXPECT_DOUBLE_EQ(fb::derived_figures::throughput_gbps(fb::report_from_json(older).results[0]), moved);
  older["results"][0]["throughput_gbps"] = 1234.0;
  EXPECT_DOUBLE_EQ(fb::to_json(fb::report_from_json(older)).at("results").at(0).at("throughput_gbps").get<double>(),
                   moved);
}

namespace {
// Every value of `before` is in `after` at the same place; `after` may have more (figures added since).
void expect_kept(const nlohmann::json& before, const nlohmann::json& after, const std::string& where) {
  if (before.is_object()) {
    for (const auto& [key, value] : before.items()) {
      ASSERT_TRUE(after.contains(key)) << where << key;
      expect_kept(value, after.at(key), where + key + ".");
    }
  } else if (before.is_array()) {
    ASSERT_EQ(after.size(), before.size()) << where;
    for (std::size_t i = 0; i < before.size(); ++i) expect_kept(before[i], after[i], where + std::to_string(i) + ".");
  } else if (!(before.is_number_float() && std::isnan(before.get<double>()))) {
    EXPECT_EQ(after, before) << where;
  }
}
}  // namespace

// The bench reports kept in docs/results, written before the result was split into parts: each
// reads back and writes every key of every cell as it was, at the same flat place.
TEST(BenchReportJson, OlderReportsWriteBackTheirKeysUnchanged) {
  std::size_t reports = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(FERRY_SOURCE_DIR) / "docs" / "results")) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    const auto old = nlohmann::json::parse(in);
    // Other tools' files (profiles, serve checks, collected reports) sit beside the reports.
    if (!old.is_object() || !old.contains("results") || old.contains("curves")) continue;
    expect_kept(old.at("results"), fb::to_json(fb::report_from_json(old)).at("results"),
                entry.path().filename().string() + ": ");
    ++reports;
  }
  EXPECT_GE(reports, 8U);  // bench, cold, encoder, link
}

// The outcome is one variant, written as the two keys reports have always had; read in any order.
TEST(BenchReportJson, OutcomeReadsFromTheKeysReportsHaveAlwaysHad) {
  const auto outcome_of = [](const char* text) {
    return fb::report_from_json(nlohmann::json::parse(text)).results.at(0).verdict.outcome;
  };
  EXPECT_EQ(outcome_of(R"({"results": [{"strategy": "pinned", "refused": null, "failed": false}]})"),
            fb::cell_outcome{fb::measured_cell{}});
  EXPECT_EQ(outcome_of(R"({"results": [{"strategy": "pinned", "refused": "needs HMM"}]})"),
            fb::cell_outcome{fb::refused_cell{"needs HMM"}});
  EXPECT_EQ(outcome_of(R"({"results": [{"failed": true, "strategy": "pinned", "refused": "out of memory"}]})"),
            fb::cell_outcome{fb::failed_cell{"out of memory"}});
  fb::bench_report report;
  report.results.resize(2);
  report.results[1].verdict.fail("out of memory");
  const auto results = fb::to_json(report).at("results");
  EXPECT_TRUE(results.at(0).at("refused").is_null());
  EXPECT_EQ(results.at(0).at("failed"), false);
  EXPECT_EQ(results.at(1).at("refused"), "out of memory");
  EXPECT_EQ(results.at(1).at("failed"), true);
}

TEST(BenchReportCsv, EmptyReportStillHasAHeader) {
  const auto rows = parse_csv(fb::render_csv(fb::bench_report{}));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], "strategy");
}

// ---- scripts/plot_bench.py ----------------------------------------------------------------------

namespace {

// FERRY_PLOT_SCRIPT where it is set (a bundle run elsewhere, as the CLI reads it), else the tree's,
// from its root: a compiler cache with a base directory compiles from relative paths, and
// __FILE__ is then relative to a build folder the test does not run in.
const fs::path plot_script = std::getenv("FERRY_PLOT_SCRIPT") != nullptr
                                 ? fs::path(std::getenv("FERRY_PLOT_SCRIPT"))
                                 : fs::path(FERRY_SOURCE_DIR) / "scripts" / "plot_bench.py";

// A python that can import matplotlib: `python3` first, then the system one (Debian's
// python3-matplotlib installs for /usr/bin/python3, which a pyenv python3 on PATH does not see).
std::string python_with_matplotlib() {
  for (const std::string python : {"python3", "/usr/bin/python3"}) {
    if (std::system((python + " -c 'import matplotlib' >/dev/null 2>&1").c_str()) == 0) return python;
  }
  return {};
}

fs::path scratch_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("ferry_test_" + name + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

fb::bench_report plot_report() {
  fb::bench_report report = full_report();
  report.results.clear();
  for (const std::size_t mb : {1u, 4u, 19u, 64u}) {
    report.results.push_back(measured("pinned", "reduce", mb << 20, 20.0 + 21.0 * mb));
    report.results.push_back(measured("managed", "reduce", mb << 20, 60.0 + 150.0 * mb));
  }
  for (const double fraction : {0.01, 0.1, 0.5}) {
    report.results.push_back(
        measured("managed", "sparse:" + std::to_string(fraction), 64u << 20, 100.0 + 9000.0 * fraction));
    report.results.push_back(
        measured("mapped", "sparse:" + std::to_string(fraction), 64u << 20, 50.0 + 1400.0 * fraction));
  }
  report.results[1].verdict.noisy = true;
  fb::strategy_result refused;
  refused.identity.strategy = ferry::strategy_kind::system;
  refused.identity.engine = "reduce";
  refused.verdict.refuse(refusal_reason);
  report.results.push_back(refused);
  return report;
}

}  // namespace

TEST(PlotBench, WritesANonEmptyPng) {
  const std::string python = python_with_matplotlib();
  if (python.empty()) GTEST_SKIP() << "matplotlib is not importable (install python3-matplotlib)";
  ASSERT_TRUE(fs::exists(plot_script)) << plot_script;

  const fs::path dir = scratch_dir("plot");
  const fs::path json_path = dir / "report.json";
  const fs::path png_path = dir / "report.png";
  std::ofstream(json_path) << fb::to_json(plot_report()).dump(2);
  fs::remove(png_path);

  const std::string command =
      python + " '" + plot_script.string() + "' '" + json_path.string() + "' '" + png_path.string() + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  ASSERT_TRUE(fs::exists(png_path));
  EXPECT_GT(fs::file_size(png_path), 1000u);
  std::ifstream png(png_path, std::ios::binary);
  const std::string magic(std::istreambuf_iterator<char>(png), {});
  EXPECT_EQ(magic.substr(0, 8), "\x89PNG\r\n\x1a\n");
  fs::remove_all(dir);
}

TEST(PlotBench, RefusesAnUnknownOutputFormat) {
  // The extension is checked before matplotlib is imported, so this runs everywhere python does.
  if (std::system("python3 -c '' >/dev/null 2>&1") != 0) GTEST_SKIP() << "python3 is not installed";
  const fs::path dir = scratch_dir("plot_ext");
  const fs::path json_path = dir / "report.json";
  std::ofstream(json_path) << fb::to_json(plot_report()).dump();
  const std::string command = "python3 '" + plot_script.string() + "' '" + json_path.string() + "' '" +
                              (dir / "report.jpg").string() + "' 2>/dev/null";
  EXPECT_NE(std::system(command.c_str()), 0);
  fs::remove_all(dir);
}

// ---- golden renderings ----
// Every rendering of full_report(), byte for byte, against files written when the result's layout
// last changed (tests/bench/golden/): a change in how results are held or walked must not change
// a byte of what users and their scripts read. FERRY_UPDATE_GOLDEN=1 rewrites the files instead;
// a change of the renderings themselves does that on purpose and the diff shows what moved.
namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void expect_golden(const std::string& name, const std::string& rendered) {
  const fs::path path = fs::path(FERRY_SOURCE_DIR) / "tests" / "bench" / "golden" / name;
  if (const char* update = std::getenv("FERRY_UPDATE_GOLDEN"); update != nullptr && std::string(update) == "1") {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << rendered;
    return;
  }
  ASSERT_TRUE(fs::exists(path)) << path << " is missing: run with FERRY_UPDATE_GOLDEN=1 to write it";
  const std::string golden = read_file(path);
  if (rendered == golden) return;
  const auto [first, unused] = std::mismatch(rendered.begin(), rendered.end(), golden.begin(), golden.end());
  const auto at = static_cast<std::size_t>(first - rendered.begin());
  ADD_FAILURE() << name << " differs from " << path << " from byte " << at
                << ":\n  rendered: " << rendered.substr(at, 80) << "\n  golden:   " << golden.substr(at, 80);
}

}  // namespace

TEST(BenchReportGolden, JsonIsByteIdentical) { expect_golden("full_report.json", fb::to_json(full_report()).dump(2)); }
TEST(BenchReportGolden, CsvIsByteIdentical) { expect_golden("full_report.csv", fb::render_csv(full_report())); }
TEST(BenchReportGolden, MarkdownIsByteIdentical) {
  expect_golden("full_report.md", fb::render_markdown(full_report()));
}
TEST(BenchReportGolden, TableIsByteIdentical) { expect_golden("full_report.txt", fb::render_table(full_report())); }
// The reader as well: the golden JSON read back and written again is the same bytes.
TEST(BenchReportGolden, GoldenJsonReadsBackToTheSameBytes) {
  const fs::path path = fs::path(FERRY_SOURCE_DIR) / "tests" / "bench" / "golden" / "full_report.json";
  ASSERT_TRUE(fs::exists(path)) << path;
  const std::string golden = read_file(path);
  EXPECT_EQ(fb::to_json(fb::report_from_json(nlohmann::json::parse(golden))).dump(2), golden);
}
