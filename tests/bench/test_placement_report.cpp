// The placement probe's renderings (placement_cost.hpp) on synthetic results: the table says
// what running away from the data costs, the JSON keeps every stage.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "ferry/bench/placement_cost.hpp"

namespace fb = ferry::bench;

namespace {

fb::sample_stats median(double us) {
  fb::sample_stats s;
  s.count = 200;
  s.median = us;
  s.min = us;
  s.max = us;
  return s;
}

std::vector<fb::placement_cost> two_gpu_results() {
  fb::placement_cost local{.engine = "touch",
                           .input_bytes = std::size_t{64} << 20,
                           .output_bytes = std::size_t{64} << 20,
                           .data_device = 1,
                           .run_device = 1,
                           .total_us = median(100),
                           .peer_in_us = std::nullopt,
                           .peer_out_us = std::nullopt,
                           .compute_us = median(100),
                           .outputs_match = true,
                           .check_detail = ""};
  fb::placement_cost away = local;
  away.run_device = 0;
  away.total_us = median(2700);
  away.peer_in_us = median(1300);
  away.peer_out_us = median(1300);
  return {local, away};
}

TEST(PlacementReport, TableShowsStagesAndTheCostOfRunningAway) {
  const std::string table = fb::render_placement_table(two_gpu_results());
  EXPECT_NE(table.find("away costs"), std::string::npos) << table;
  EXPECT_NE(table.find("+2600 µs (27.0x)"), std::string::npos) << table;
  EXPECT_NE(table.find("1300"), std::string::npos) << table;
  EXPECT_NE(table.find("67.1 MB"), std::string::npos) << table;  // 64 MiB, in decimal units
  // The local row has no peer stages and no cost.
  const auto first_row =
      table.substr(table.find('\n') + 1, table.find('\n', table.find('\n') + 1) - table.find('\n') - 1);
  EXPECT_NE(first_row.find("GPU 1  GPU 1"), std::string::npos) << first_row;
  EXPECT_EQ(first_row.find("+"), std::string::npos) << first_row;
}

TEST(PlacementReport, FailedChecksAreShown) {
  auto results = two_gpu_results();
  results[1].outputs_match = false;
  results[1].check_detail = "output 'output'[3]: 7 vs reference 9";
  EXPECT_NE(fb::render_placement_table(results).find("✗ output 'output'[3]"), std::string::npos);
}

TEST(PlacementReport, JsonKeepsEveryStage) {
  const auto j = fb::placement_costs_to_json(two_gpu_results());
  const auto& list = j.at("placement_costs");
  ASSERT_EQ(list.size(), 2U);
  EXPECT_EQ(list[0].at("data_device"), 1);
  EXPECT_EQ(list[0].at("run_device"), 1);
  EXPECT_TRUE(list[0].at("peer_in_us").is_null());
  EXPECT_EQ(list[1].at("run_device"), 0);
  EXPECT_DOUBLE_EQ(list[1].at("peer_in_us").at("median").get<double>(), 1300);
  EXPECT_DOUBLE_EQ(list[1].at("total_us").at("median").get<double>(), 2700);
  EXPECT_TRUE(list[1].at("outputs_match").get<bool>());
}

}  // namespace
