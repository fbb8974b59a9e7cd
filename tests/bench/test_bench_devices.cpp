// Multi-GPU bench results in every rendering: the device list survives JSON, is a CSV column,
// and labels the strategy cell "[2 GPUs]" in the table and markdown; one-GPU results look as
// they always did.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "ferry/bench/report.hpp"

namespace fb = ferry::bench;

namespace {

fb::strategy_result measured(std::vector<int> devices) {
  fb::strategy_result r;
  r.identity.strategy = ferry::strategy_kind::pinned;
  r.identity.engine = "mlp:48x2048";
  r.identity.input_bytes = 4 << 20;
  r.identity.output_bytes = 4 << 20;
  r.identity.inflight = 4;
  r.identity.clients = 8;
  r.identity.devices = std::move(devices);
  r.figures.iterations = 100;
  r.figures.wall_seconds = 1;
  r.figures.latency_us.count = 100;
  r.figures.latency_us.median = 900;
  r.figures.compute_us.count = 100;
  r.figures.compute_us.median = 800;
  r.figures.throughput_per_s = 2000;
  r.verdict.output_checked = true;
  r.verdict.output_matches = true;
  return r;
}

fb::bench_report report_of(std::vector<fb::strategy_result> results) {
  fb::bench_report report;
  report.date = "2026-11-29T22:00:00Z";
  report.command = "ferry bench --devices 0,1";
  report.machine.gpu_name = "NVIDIA H200 (GPUs 0,1)";
  report.results = std::move(results);
  return report;
}

TEST(BenchDevices, DeviceListRoundTripsThroughJson) {
  const auto report = report_of({measured({0, 1}), measured({1})});
  const auto j = fb::to_json(report);
  EXPECT_EQ(j.at("results")[0].at("devices"), (nlohmann::json{0, 1}));
  const auto back = fb::report_from_json(j);
  EXPECT_EQ(back.results[0].identity.devices, (std::vector<int>{0, 1}));
  EXPECT_EQ(back.results[1].identity.devices, (std::vector<int>{1}));
}

TEST(BenchDevices, ReportsWithoutTheFieldReadAsBefore) {
  auto j = fb::to_json(report_of({measured({0})}));
  j.at("results")[0].erase("devices");
  EXPECT_TRUE(fb::report_from_json(j).results[0].identity.devices.empty());
}

TEST(BenchDevices, TableAndMarkdownLabelSeveralGpus) {
  const auto report = report_of({measured({0, 1}), measured({0})});
  const std::string table = fb::render_table(report);
  EXPECT_NE(table.find("pinned [inflight 4, clients 8, 2 GPUs]"), std::string::npos) << table;
  EXPECT_NE(fb::render_markdown(report).find("pinned [inflight 4, clients 8, 2 GPUs]"), std::string::npos);
  // The one-GPU row keeps its old label.
  EXPECT_NE(table.find("pinned [inflight 4, clients 8]"), std::string::npos) << table;
  EXPECT_EQ(table.find("1 GPUs"), std::string::npos) << table;
}

TEST(BenchDevices, CsvHasADevicesColumn) {
  const std::string csv = fb::render_csv(report_of({measured({0, 1})}));
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_NE(header.find(",devices,"), std::string::npos) << header;
  EXPECT_NE(csv.find("\"0,1\""), std::string::npos) << csv;  // quoted: it holds a comma
}

}  // namespace
