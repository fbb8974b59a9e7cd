// `ferry info` without a GPU: the static recommendations, the JSON record and its text rendering
// built from synthetic device_caps records, and the CLI's behaviour on a machine with no GPU.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include "support/synthetic_caps.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferry/device/device_caps.hpp"
#include "ferry/device/device_diagnosis.hpp"
#include "ferry/engines/backend_api.h"
#include "ferry/info/info_report.hpp"
#include "ferry/memory/recommendation.hpp"
#include "ferry/memory/strategy.hpp"
#include "support/backend_test_paths.hpp"
#include "support/cli_runner.hpp"

namespace {

using ferry::platform_class;
using ferry::strategy_kind;
using ferry::testing::h200_like;
using ferry::testing::orin_like;

constexpr std::array all_platforms{platform_class::discrete_pcie, platform_class::integrated,
                                   platform_class::coherent_hmm, platform_class::coherent_ats};

// One representative record per platform class.
ferry::device_caps record_of(platform_class platform) {
  auto caps = h200_like();
  switch (platform) {
    case platform_class::discrete_pcie:
      break;
    case platform_class::integrated:
      caps = orin_like();
      break;
    case platform_class::coherent_hmm:
      caps.pageable_memory_access = true;
      break;
    case platform_class::coherent_ats:
      caps.pageable_memory_access = true;
      caps.pageable_memory_access_uses_host_page_tables = true;
      caps.direct_managed_mem_access_from_host = true;
      break;
  }
  return caps;
}

bool contains(std::span<const strategy_kind> kinds, strategy_kind k) {
  return std::find(kinds.begin(), kinds.end(), k) != kinds.end();
}

// Collapses every run of whitespace to one space, so wrapped text can be searched for phrases.
std::string collapse_whitespace(const std::string& text) {
  std::istringstream words(text);
  std::string out;
  std::string word;
  while (words >> word) {
    if (!out.empty()) out += ' ';
    out += word;
  }
  return out;
}

// --- recommendations --------------------------------------------------------------------------

TEST(Recommendation, DiscretePcieIsPinnedCopiesWithTwoSlots) {
  const auto r = ferry::recommendation_for(platform_class::discrete_pcie);
  EXPECT_EQ(r.recommended, strategy_kind::pinned);
  EXPECT_GE(r.in_flight_slots, 2);
  EXPECT_TRUE(contains(r.alternatives, strategy_kind::mapped));
  EXPECT_TRUE(contains(r.avoid, strategy_kind::managed));
  EXPECT_TRUE(contains(r.avoid, strategy_kind::pageable));
  EXPECT_TRUE(contains(r.avoid, strategy_kind::managed_prefetch));
}

TEST(Recommendation, IntegratedIsZeroCopyAndAvoidsCopies) {
  const auto r = ferry::recommendation_for(platform_class::integrated);
  EXPECT_EQ(ferry::properties(r.recommended).path, ferry::data_path::zero_copy);
  for (const auto k : {strategy_kind::pageable, strategy_kind::staged, strategy_kind::pinned})
    EXPECT_TRUE(contains(r.avoid, k)) << ferry::to_string(k);
}

TEST(Recommendation, CoherentHmmStillCopiesPinnedAndAvoidsFaultingPaths) {
  const auto r = ferry::recommendation_for(platform_class::coherent_hmm);
  EXPECT_EQ(r.recommended, strategy_kind::pinned);
  EXPECT_TRUE(contains(r.avoid, strategy_kind::system));
  EXPECT_TRUE(contains(r.avoid, strategy_kind::managed));
}

TEST(Recommendation, CoherentAtsReadsSystemMemoryInPlace) {
  const auto r = ferry::recommendation_for(platform_class::coherent_ats);
  EXPECT_EQ(r.recommended, strategy_kind::system);
  EXPECT_TRUE(contains(r.alternatives, strategy_kind::managed_advise));
  EXPECT_NE(r.reasoning.find("NVLink-C2C"), std::string_view::npos);
}

TEST(Recommendation, ListsAreConsistentAndTheChoiceIsAvailableOnItsPlatform) {
  for (const auto platform : all_platforms) {
    const auto r = ferry::recommendation_for(platform);
    SCOPED_TRACE(std::string(ferry::to_string(platform)));
    EXPECT_EQ(r.platform, platform);
    EXPECT_FALSE(r.reasoning.empty());
    // The rules are shown on machines they were not measured on: no figure of one machine.
    for (const std::string_view figure : {"GB/s", " us ", "µs", "x slower", " MB", "%"})
      EXPECT_EQ(r.reasoning.find(figure), std::string_view::npos) << figure << " in: " << r.reasoning;
    EXPECT_FALSE(contains(r.avoid, r.recommended));
    EXPECT_FALSE(contains(r.alternatives, r.recommended));
    for (const auto k : r.alternatives) EXPECT_FALSE(contains(r.avoid, k)) << ferry::to_string(k);
    const auto caps = record_of(platform);
    ASSERT_EQ(ferry::classify(caps), platform);
    EXPECT_FALSE(ferry::unavailable_reason(r.recommended, caps).has_value());
  }
}

// --- the JSON record --------------------------------------------------------------------------

const ferry::cuda_versions cuda13{13000, 13000};

ferry::link_bandwidth measured_link() { return {52.9, 53.4, 53.8, 54.1, std::size_t{256} << 20, 20}; }

TEST(InfoJson, HasVersionsAndEveryDeviceField) {
  const auto info = ferry::build_info_json(cuda13, {h200_like(), orin_like()}, {{0, measured_link()}});
  EXPECT_EQ(info.at("cuda").at("driver"), "13.0");
  EXPECT_EQ(info.at("cuda").at("runtime"), "13.0");
  ASSERT_EQ(info.at("devices").size(), 2U);

  const auto& h200 = info.at("devices").at(0);
  for (const char* key :
       {"ordinal", "name", "compute_capability", "multiprocessors", "total_memory_bytes", "free_memory_bytes",
        "pci_bus_id", "capabilities", "pcie", "platform_class", "strategies", "recommendation", "link_bandwidth"})
    EXPECT_TRUE(h200.contains(key)) << key;
  EXPECT_EQ(h200.at("name"), "NVIDIA H200");
  EXPECT_EQ(h200.at("compute_capability"), "9.0");
  EXPECT_EQ(h200.at("multiprocessors"), 132);
  EXPECT_EQ(h200.at("total_memory_bytes"), 150'109'880'320ULL);
  EXPECT_EQ(h200.at("pci_bus_id"), "0000:41:00.0");
  EXPECT_EQ(h200.at("platform_class"), "discrete-pcie");
  EXPECT_EQ(h200.at("pcie").at("current_generation"), 5);
  EXPECT_EQ(h200.at("pcie").at("max_width"), 16);
  EXPECT_EQ(h200.at("recommendation").at("recommended"), "pinned");
  EXPECT_EQ(h200.at("link_bandwidth").at("h2d_gbps_median"), 52.9);
  EXPECT_EQ(h200.at("link_bandwidth").at("d2h_gbps_best"), 54.1);
  EXPECT_EQ(h200.at("link_bandwidth").at("repetitions"), 20);

  const auto& orin = info.at("devices").at(1);
  EXPECT_EQ(orin.at("platform_class"), "integrated");
  EXPECT_TRUE(orin.at("pcie").is_null());
  EXPECT_TRUE(orin.at("link_bandwidth").is_null());
}

TEST(InfoJson, HasEveryCapabilityFlag) {
  auto caps = h200_like();
  caps.direct_managed_mem_access_from_host = true;
  const auto info = ferry::build_info_json(cuda13, {caps});
  const auto& flags = info.at("devices").at(0).at("capabilities");
  EXPECT_EQ(flags.size(), 8U);
  for (const auto& [key, value] : flags.items()) EXPECT_TRUE(value.is_boolean()) << key;
  EXPECT_EQ(flags.at("integrated"), false);
  EXPECT_EQ(flags.at("can_map_host_memory"), true);
  EXPECT_EQ(flags.at("host_register_supported"), true);
  EXPECT_EQ(flags.at("managed_memory"), true);
  EXPECT_EQ(flags.at("concurrent_managed_access"), true);
  EXPECT_EQ(flags.at("pageable_memory_access"), false);
  EXPECT_EQ(flags.at("pageable_memory_access_uses_host_page_tables"), false);
  EXPECT_EQ(flags.at("direct_managed_mem_access_from_host"), true);
}

TEST(InfoJson, ListsEveryStrategyWithItsReason) {
  for (const auto platform : all_platforms) {
    SCOPED_TRACE(std::string(ferry::to_string(platform)));
    const auto caps = record_of(platform);
    const auto info = ferry::build_info_json(cuda13, {caps});
    const auto& strategies = info.at("devices").at(0).at("strategies");
    ASSERT_EQ(strategies.size(), ferry::all_strategies.size());
    for (std::size_t i = 0; i < ferry::all_strategies.size(); ++i) {
      const auto k = ferry::all_strategies[i];
      const auto& s = strategies.at(i);
      EXPECT_EQ(s.at("name"), ferry::to_string(k));
      const auto reason = ferry::unavailable_reason(k, caps);
      EXPECT_EQ(s.at("available"), !reason.has_value());
      if (reason)
        EXPECT_EQ(s.at("reason"), *reason);
      else
        EXPECT_TRUE(s.at("reason").is_null());
    }
  }
}

// A strategy registered after the built-ins is listed as they are: peer, refused on one GPU.
TEST(InfoJson, ListsPeerWithItsOneGpuRefusal) {
  const auto info = ferry::build_info_json(cuda13, {record_of(ferry::platform_class::discrete_pcie)});
  const auto& strategies = info.at("devices").at(0).at("strategies");
  const auto peer =
      std::find_if(strategies.begin(), strategies.end(), [](const auto& s) { return s.at("name") == "peer"; });
  ASSERT_NE(peer, strategies.end());
  EXPECT_EQ(peer->at("available"), false);
  EXPECT_EQ(peer->at("reason"), "this machine has one GPU, and peer keeps inputs and outputs in another GPU's memory");
}

TEST(InfoJson, RecommendationMatchesThePlatform) {
  for (const auto platform : all_platforms) {
    const auto info = ferry::build_info_json(cuda13, {record_of(platform)});
    const auto& rec = info.at("devices").at(0).at("recommendation");
    const auto expected = ferry::recommendation_for(platform);
    EXPECT_EQ(rec.at("recommended"), ferry::to_string(expected.recommended));
    EXPECT_EQ(rec.at("avoid").size(), expected.avoid.size());
    EXPECT_EQ(rec.at("alternatives").size(), expected.alternatives.size());
    EXPECT_EQ(rec.at("in_flight_slots"), expected.in_flight_slots);
    EXPECT_EQ(rec.at("reasoning"), expected.reasoning);
  }
}

TEST(InfoJson, NoDevicesGivesAnEmptyList) {
  const auto info = ferry::build_info_json({0, 13000}, {});
  EXPECT_EQ(info.at("cuda").at("driver"), "none");
  EXPECT_TRUE(info.at("devices").is_array());
  EXPECT_TRUE(info.at("devices").empty());
}

TEST(CudaVersion, FormatsMajorDotMinor) {
  EXPECT_EQ(ferry::format_cuda_version(13000), "13.0");
  EXPECT_EQ(ferry::format_cuda_version(12080), "12.8");
  EXPECT_EQ(ferry::format_cuda_version(0), "none");
}

// --- the text rendering -----------------------------------------------------------------------

TEST(InfoText, NamesEachUnavailableStrategyWithItsReason) {
  auto caps = h200_like();  // system unavailable
  caps.can_map_host_memory = false;
  caps.host_register_supported = false;
  caps.concurrent_managed_access = false;
  const std::string text = collapse_whitespace(ferry::render_info_text(ferry::build_info_json(cuda13, {caps})));
  int unavailable = 0;
  for (const auto k : ferry::all_strategies) {
    const auto reason = ferry::unavailable_reason(k, caps);
    const std::string name(ferry::to_string(k));
    if (reason) {
      ++unavailable;
      EXPECT_NE(text.find(name + " unavailable: " + *reason), std::string::npos) << name;
    } else {
      EXPECT_NE(text.find(name + " available"), std::string::npos) << name;
    }
  }
  EXPECT_EQ(unavailable, 8);  // mapped, both registered, three managed, system, peer (one GPU)
}

TEST(InfoText, ShowsDeviceFactsRecommendationAndLink) {
  const std::string raw =
      ferry::render_info_text(ferry::build_info_json(cuda13, {h200_like(), orin_like()}, {{0, measured_link()}}));
  const std::string text = collapse_whitespace(raw);
  for (const char* phrase : {"CUDA driver 13.0, runtime 13.0", "GPU 0: NVIDIA H200", "9.0, 132 SMs", "0000:41:00.0",
                             "Gen5 x16 (max Gen5 x16)", "discrete-pcie", "canMapHostMemory=1", "pageableMemoryAccess=0",
                             "recommended pinned with 2 in-flight slots", "H2D 52.9 GB/s median, 53.4 best",
                             "D2H 53.8 median, 54.1 best", "GPU 1: Orin", "integrated", "not measured"})
    EXPECT_NE(text.find(phrase), std::string::npos) << phrase << "\n" << raw;
  // Compact: no line of the rendering runs past 100 columns unless one word is that long.
  std::istringstream lines(raw);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100U) << line;
}

// --- the CLI on a machine without a GPU -------------------------------------------------------

TEST(CliInfo, WithoutAGpuPrintsOneNoDeviceLineAndExitsThree) {
  if (!cli_built) GTEST_SKIP() << "the ferry CLI is not built (FERRY_BUILD_APPS=OFF)";
  if (ferry::cuda_device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  for (const char* args :
       {"info", "info --json", "info --measure --device 0", "calibrate", "calibrate --quick",
        "calibrate --thorough --device 0 --profile /tmp/p.json", "bench --strategy auto --engine reduce"}) {
    const auto result = run_cli(args, captured::stderr_only);
    EXPECT_EQ(result.exit_code, 3) << args << ": " << result.output;
    EXPECT_EQ(result.output.rfind("ferry: no CUDA device", 0), 0U) << args << ": " << result.output;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << result.output;
  }
}

TEST(CliInfo, JsonWithoutAGpuIsADocumentThatSaysWhy) {
  if (!cli_built) GTEST_SKIP() << "the ferry CLI is not built (FERRY_BUILD_APPS=OFF)";
  if (ferry::cuda_device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  const auto result = run_cli("info --json", captured::stdout_only);
  EXPECT_EQ(result.exit_code, 3) << result.output;
  const auto doc = nlohmann::json::parse(result.output);  // throws (fails the test) if not JSON
  EXPECT_TRUE(doc.at("devices").is_array());
  EXPECT_TRUE(doc.at("devices").empty());
  EXPECT_EQ(doc.at("no_device_reason").get<std::string>().rfind("no CUDA device", 0), 0U) << result.output;
}

// `ferry info` lists the backends it finds, with GPU or without: the example backend beside the
// program (an installation's layout), and the tests' own through --backend-directory, the broken
// ones with their problem.
TEST(CliInfo, ListsTheBackendsItFindsWithTheirVersions) {
  if (!cli_built) GTEST_SKIP() << "the ferry CLI is not built (FERRY_BUILD_APPS=OFF)";
  const std::string dir = ferry::test::test_backend_dir().string();
  const auto text = run_cli("info --backend-directory '" + dir + "'", captured::stdout_only);
  EXPECT_NE(text.output.find("Backends (model specs NAME:PATH; searched in " + dir), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("affine   1.0 (example, C) (API 3, also on the CPU)"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("seam     test (ferry's C++ engine seam) (API 3)"), std::string::npos) << text.output;
  // Built against the first version of the ABI, still taken.
  EXPECT_NE(text.output.find("apiv1    1.0 (example, C) (API 1, also on the CPU)"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("oldapi   unusable: "), std::string::npos) << text.output;
  const auto json = run_cli("info --json --backend-directory '" + dir + "'", captured::stdout_only);
  const auto doc = nlohmann::json::parse(json.output);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& b : doc.at("backends")) by_name[b.at("name").get<std::string>()] = b;
  ASSERT_TRUE(by_name.contains("affine")) << json.output;
  EXPECT_EQ(by_name["affine"].at("version"), "1.0 (example, C)");
  EXPECT_EQ(by_name["affine"].at("api_version"), FERRY_BACKEND_API_VERSION);
  EXPECT_EQ(by_name["affine"].at("computes_on_host"), true);
  ASSERT_TRUE(by_name.contains("partial")) << json.output;
  EXPECT_NE(by_name["partial"].at("problem").get<std::string>().find("lacks the required functions"),
            std::string::npos);
}

// A malformed built-in engine is named before anything looks for a GPU, as a bad strategy is.
TEST(CliInfo, BenchNamesAMalformedEngineBeforeTheGpu) {
  if (!cli_built) GTEST_SKIP() << "the ferry CLI is not built (FERRY_BUILD_APPS=OFF)";
  for (const auto& [args, says] : {std::pair{"bench --engine reduce,sparse", "builtin workload 'sparse'"},
                                   std::pair{"bench --engine reduce:0", "builtin workload 'reduce:0'"},
                                   std::pair{"bench --engine tuch", "engine 'tuch': unknown workload"}}) {
    const auto result = run_cli(args, captured::stderr_only);
    EXPECT_EQ(result.exit_code, 2) << args << ": " << result.output;  // a wrong value
    EXPECT_EQ(result.output.find("no CUDA device"), std::string::npos) << args << ": " << result.output;
    EXPECT_NE(result.output.find(says), std::string::npos) << args << ": " << result.output;
  }
}

TEST(CliInfo, CalibrateTakesOneSweepDepth) {
  if (!cli_built) GTEST_SKIP() << "the ferry CLI is not built (FERRY_BUILD_APPS=OFF)";
  const auto result = run_cli("calibrate --quick --thorough", captured::both);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("excludes"), std::string::npos) << result.output;
}

// `ferry`, `ferry help` and `ferry --help` print the help and exit 0; `--version` says what this
// build is.
TEST(CliInfo, HelpAndVersionPrintAndExitZero) {
  if (!cli_built) GTEST_SKIP() << "the ferry CLI is not built (FERRY_BUILD_APPS=OFF)";
  for (const char* args : {"", "help", "--help"}) {
    const auto result = run_cli(args, captured::both);
    EXPECT_EQ(result.exit_code, 0) << "'" << args << "': " << result.output;
    EXPECT_NE(result.output.find("Subcommands:"), std::string::npos) << "'" << args << "': " << result.output;
    EXPECT_NE(result.output.find("bench"), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("Exit codes: 0 done, 1 failed while running, 2 a wrong flag"), std::string::npos)
        << result.output;
  }
  const auto version = run_cli("--version", captured::stdout_only);
  EXPECT_EQ(version.exit_code, 0) << version.output;
  EXPECT_EQ(version.output.rfind("ferry 0.", 0), 0U) << version.output;
  EXPECT_NE(version.output.find("device code for " + std::string(ferry::built_cuda_architectures())), std::string::npos)
      << version.output;
  EXPECT_NE(version.output.find("backend API 3 (loads backends of 1 to 3)"), std::string::npos) << version.output;
}

// One exit code per class of mistake: a flag CLI11 refuses and a value ferry refuses are both 2.
TEST(CliInfo, UsageMistakesExitTwo) {
  if (!cli_built) GTEST_SKIP() << "the ferry CLI is not built (FERRY_BUILD_APPS=OFF)";
  for (const char* args : {"--no-such-flag", "bench --no-such-flag", "frobnicate", "calibrate --quick --thorough",
                           "bench --inflight 0", "bench --engine tuch", "bench --strategy sideways"}) {
    const auto result = run_cli(args, captured::both);
    EXPECT_EQ(result.exit_code, 2) << args << ": " << result.output;
  }
}

TEST(CliInfo, RejectsANegativeDevice) {
  if (!cli_built) GTEST_SKIP() << "the ferry CLI is not built (FERRY_BUILD_APPS=OFF)";
  const auto result = run_cli("info --device -1", captured::both);
  EXPECT_EQ(result.exit_code, 2) << result.output;
}

// Both values parse (the run then stops at the missing GPU, exit 3); anything else is a
// command-line error that names the flag (exit 2).
TEST(CliBench, InputWritesTakesCachedOrStreaming) {
  if (!cli_built) GTEST_SKIP() << "the ferry CLI is not built (FERRY_BUILD_APPS=OFF)";
  if (ferry::cuda_device_count() > 0) GTEST_SKIP() << "this machine has a GPU (a valid flag would run a benchmark)";
  for (const char* args : {"bench --input-writes cached", "bench --input-writes streaming"}) {
    const auto result = run_cli(args, captured::stderr_only);
    EXPECT_EQ(result.exit_code, 3) << args << ": " << result.output;
  }
}

TEST(CliBench, InputWritesRefusesOtherValues) {
  if (!cli_built) GTEST_SKIP() << "the ferry CLI is not built (FERRY_BUILD_APPS=OFF)";
  const auto result = run_cli("bench --input-writes sideways", captured::both);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--input-writes"), std::string::npos) << result.output;
}

}  // namespace

namespace {

// Output paths and the plot's prerequisites are checked before anything is measured, so a typo
// costs a second, not a run (and on a machine without a GPU it is named before the GPU is missed).
TEST(CliBench, ABadOutputPathIsNamedBeforeTheRun) {
  if (!cli_built) GTEST_SKIP() << "the ferry CLI is not built (FERRY_BUILD_APPS=OFF)";
  for (const auto& [args, says] :
       {std::pair{std::string("bench --json /nonexistent-folder/r.json"),
                  std::string("--json '/nonexistent-folder/r.json': the folder '/nonexistent-folder' does not exist")},
        std::pair{std::string("bench --md /tmp"), std::string("--md '/tmp' is a folder; give a file name")},
        std::pair{std::string("bench --plot r.jpg"), std::string("--plot 'r.jpg': the image must be .png or .svg")}}) {
    const auto result = run_cli(args, captured::stderr_only);
    EXPECT_EQ(result.exit_code, 2) << args << ": " << result.output;
    EXPECT_NE(result.output.find(says), std::string::npos) << args << ": " << result.output;
    EXPECT_EQ(result.output.find("no CUDA device"), std::string::npos) << args << ": " << result.output;
  }
}

}  // namespace

namespace {

// `ferry info --engine`: a model's integer inputs with their bound, or that they have none, on a
// machine with or without a GPU (the lookup test backend computes on the CPU too).
TEST(InfoEngine, SaysEachIntegerInputsBoundOrThatItHasNone) {
  const auto folder = std::filesystem::temp_directory_path();
  const auto write = [&](const std::string& name, const std::string& declare) {
    const auto path = folder / name;
    std::ofstream(path) << "format ferry-lookup/1\nrows 30522\nwidth 8\ndim 2\nmax_batch 4\ndeclare_bound " << declare
                        << "\n";
    return path.string();
  };
  const std::string dir = " --backend-directory '" + ferry::test::test_backend_dir().string() + "'";
  auto r = run_cli("info --engine lookup:" + write("info_bound.lookup", "yes") + dir, captured::both);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("index bound 30522: values in [0, 30522)"), std::string::npos) << r.output;
  r = run_cli("info --engine lookup:" + write("info_bare.lookup", "no") + dir + " --json", captured::stdout_only);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto doc = nlohmann::json::parse(r.output);
  EXPECT_EQ(doc["tensors"][0]["name"], "ids");
  EXPECT_TRUE(doc["tensors"][0]["index_bound"].is_null());
  r = run_cli("info --engine lookup:" + write("info_bare.lookup", "no") + dir, captured::both);
  EXPECT_NE(r.output.find("no index bound: ferry gives it zeros"), std::string::npos) << r.output;
  r = run_cli("info --engine sparse:0.5", captured::both);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("indices"), std::string::npos) << r.output;
}

}  // namespace
