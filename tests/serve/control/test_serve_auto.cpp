// "strategy": "auto" and "inflight": "auto" in a model's config.json: parsing, the pick from a
// GPU's profile or the platform rules, and a repository with such a model loading on the CPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "ferry/core/error.hpp"
#include "serve/config/model_config.hpp"
#include "serve/control/model_choice.hpp"
#include "serve/control/model_repository.hpp"
#include "serve/execution/execution_platform.hpp"
#include "serve/transport/http/http_documents.hpp"
#include "support/synthetic_profile.hpp"

namespace {

namespace fs = std::filesystem;
namespace t = ferry::testing;
using ferry::strategy_kind;
using ferry::serve::parse_model_config;

// A model repository in a fresh temporary folder: one folder per model with its config.json.
fs::path write_repository(const std::string& folder, const std::map<std::string, std::string>& configs) {
  const fs::path dir = fs::temp_directory_path() / (folder + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  for (const auto& [name, config] : configs) {
    fs::create_directories(dir / name);
    std::ofstream(dir / name / "config.json") << config;
  }
  return dir;
}

// A machine without a GPU: the CPU reference runs every model.
ferry::serve::execution_platform cpu_only() {
  ferry::serve::execution_platform cpu;
  cpu.no_gpu_reason = "no CUDA device: none in this test";
  return cpu;
}

ferry::serve::execution_platform one_gpu(const ferry::device_caps& caps, std::optional<ferry::device_profile> p) {
  ferry::serve::execution_platform platform;
  platform.gpus = {caps};
  platform.device_count = 1;
  ferry::profile_lookup lookup;
  lookup.status = p ? ferry::profile_status::loaded : ferry::profile_status::missing;
  lookup.message = p ? "profile loaded" : "no profile for GPU 0 at /cache/x.json (run `ferry calibrate`)";
  lookup.profile = std::move(p);
  platform.profiles = {lookup};
  return platform;
}

TEST(ServeAuto, ConfigTakesAutoForStrategyAndInflight) {
  const auto c = parse_model_config(R"({"engine": "reduce", "strategy": "auto", "inflight": "auto"})", "m");
  EXPECT_TRUE(c.strategy_auto);
  EXPECT_TRUE(c.inflight_auto);
  const auto fixed = parse_model_config(R"({"engine": "reduce", "strategy": "mapped", "inflight": 3})", "m");
  EXPECT_FALSE(fixed.strategy_auto);
  EXPECT_FALSE(fixed.inflight_auto);
}

TEST(ServeAuto, OtherWordsForInflightAreRefusedByName) {
  try {
    (void)parse_model_config(R"({"engine": "reduce", "inflight": "many"})", "m");
    FAIL() << "accepted";
  } catch (const ferry::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'inflight' must be a count in [1, 64] or \"auto\", got \"many\""),
              std::string::npos)
        << e.what();
  }
}

TEST(ServeAuto, PicksFromTheGpusProfile) {
  auto c =
      parse_model_config(R"({"engine": "reduce", "strategy": "auto", "inflight": "auto", "input_size": "16MB"})", "m");
  const auto caps = t::discrete_pcie_caps();
  const std::string why =
      ferry::serve::choose_automatic(c, one_gpu(caps, t::synthetic_profile(caps, t::discrete_model)));
  EXPECT_EQ(c.strategy, strategy_kind::pinned);
  EXPECT_EQ(c.inflight, 3);  // serving is throughput: the measured depth
  EXPECT_EQ(why.rfind("auto: pinned with 3 in-flight slots on GPU 0: measured on this machine", 0), 0U) << why;
}

TEST(ServeAuto, OnlyTheAutomaticSettingChanges) {
  auto c = parse_model_config(R"({"engine": "reduce", "strategy": "auto", "inflight": 5})", "m");
  const auto caps = t::integrated_caps();
  (void)ferry::serve::choose_automatic(c, one_gpu(caps, t::synthetic_profile(caps, t::integrated_model)));
  EXPECT_EQ(c.strategy, strategy_kind::mapped);
  EXPECT_EQ(c.inflight, 5);
}

TEST(ServeAuto, WithoutAProfileTheRulesAreLabelled) {
  auto c = parse_model_config(R"({"engine": "reduce", "strategy": "auto"})", "m");
  const std::string why = ferry::serve::choose_automatic(c, one_gpu(t::ats_caps(), std::nullopt));
  EXPECT_EQ(c.strategy, strategy_kind::system);
  EXPECT_NE(why.find("platform rules for coherent-ats, not measured on this machine"), std::string::npos) << why;
}

TEST(ServeAuto, AStaleProfileIsNamedInTheReason) {
  auto c = parse_model_config(R"({"engine": "reduce", "strategy": "auto"})", "m");
  auto platform = one_gpu(t::hmm_caps(), std::nullopt);
  platform.profiles[0].status = ferry::profile_status::stale;
  platform.profiles[0].message = "profile /p.json is stale and was not used: it was measured under CUDA driver 12.8";
  const std::string why = ferry::serve::choose_automatic(c, platform);
  EXPECT_NE(why.find("[profile /p.json is stale"), std::string::npos) << why;
}

TEST(ServeAuto, NothingAutomaticChangesNothing) {
  auto c = parse_model_config(R"({"engine": "reduce", "strategy": "staged"})", "m");
  EXPECT_TRUE(ferry::serve::choose_automatic(c, one_gpu(t::discrete_pcie_caps(), std::nullopt)).empty());
  EXPECT_EQ(c.strategy, strategy_kind::staged);
}

// A repository with an "auto" model loads on a machine without a GPU (the CPU reference runs it),
// logs why, and its documents carry the settings and the reason.
TEST(ServeAuto, RepositoryWithAnAutoModelLoadsOnTheCpu) {
  const fs::path dir = write_repository(
      "ferry_serve_auto_repository",
      {{"reduce_auto", R"({"engine": "reduce", "strategy": "auto", "inflight": "auto", "input_size": 8000})"}});
  const ferry::serve::execution_platform cpu = cpu_only();
  std::ostringstream log;
  const ferry::serve::model_repository repository(dir, cpu, log);
  fs::remove_all(dir);
  const auto model = repository.find("reduce_auto");
  ASSERT_NE(model, nullptr);
  EXPECT_TRUE(model->ready()) << model->failure;
  EXPECT_NE(log.str().find("model 'reduce_auto' auto: no GPU (no CUDA device: none in this test), the CPU reference"),
            std::string::npos)
      << log.str();
  const auto config = ferry::serve::model_config_json(*model);
  EXPECT_EQ(config.at("parameters").at("strategy_choice").at("string_value"), model->automatic);
  EXPECT_EQ(config.at("parameters").at("inflight").at("string_value"), "2");
  EXPECT_EQ(ferry::serve::model_metadata_json(*model).at("parameters"), config.at("parameters"));
}

// `ferry serve --profile PATH`: the first GPU's profile comes from PATH, the others' from the cache
// folder; a named file that cannot be used is said in the pick's reason.
TEST(ServeAuto, ANamedProfileIsTheFirstGpusAndItsProblemsAreSaid) {
  const fs::path dir = fs::temp_directory_path() / ("ferry-serve-profile-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string cache = (dir / "cache").string();
  ::setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  const auto first = t::discrete_pcie_caps();
  auto second = t::hmm_caps();
  second.ordinal = 1;
  const fs::path named = dir / "mine.json";
  ferry::save_profile(t::synthetic_profile(first, t::discrete_model), named);

  const auto found = ferry::serve::lookup_profiles({first, second}, named);
  ASSERT_EQ(found.size(), 2U);
  EXPECT_EQ(found[0].status, ferry::profile_status::loaded) << found[0].message;
  EXPECT_EQ(found[1].status, ferry::profile_status::missing);  // nothing in the cache folder
  EXPECT_EQ(found[1].path.parent_path().string().rfind(cache, 0), 0U) << found[1].path;

  // The same file named for another GPU is stale, and a missing one is missing; both are said.
  ferry::serve::execution_platform platform;
  platform.gpus = {second};
  platform.device_count = 2;
  platform.profiles = ferry::serve::lookup_profiles(platform.gpus, named);
  platform.profile_named = true;
  EXPECT_EQ(platform.profiles[0].status, ferry::profile_status::stale);
  auto c = parse_model_config(R"({"engine": "reduce", "strategy": "auto"})", "m");
  EXPECT_NE(ferry::serve::choose_automatic(c, platform).find("[" + platform.profiles[0].message + "]"),
            std::string::npos);
  platform.profiles = ferry::serve::lookup_profiles(platform.gpus, dir / "absent.json");
  EXPECT_EQ(platform.profiles[0].status, ferry::profile_status::missing);
  const std::string why = ferry::serve::choose_automatic(c, platform);
  EXPECT_NE(why.find("absent.json"), std::string::npos) << why;
  ::unsetenv("XDG_CACHE_HOME");
  fs::remove_all(dir);
}

// A built-in engine's tensors are sized before it loads, so "auto" picks per tensor: sparse's
// small index input is read in place while its 16 MiB table is copied, where the profile says a
// copy's fixed cost outweighs a mapped read of a few bytes (sparse:1 reads every page of its
// table; a sparser lookup is below).
t::cost copy_has_a_fixed_cost(strategy_kind k, ferry::transfer_use use) {
  if (k == strategy_kind::mapped) return {10, 40};
  return t::discrete_model(k, use);
}

TEST(ServeAuto, ABuiltInEngineIsPickedPerTensor) {
  auto c = parse_model_config(R"({"engine": "sparse:1", "strategy": "auto", "input_size": "16MiB"})", "m");
  const auto caps = t::discrete_pcie_caps();
  const std::string why =
      ferry::serve::choose_automatic(c, one_gpu(caps, t::synthetic_profile(caps, copy_has_a_fixed_cost)));
  EXPECT_EQ(c.strategy, strategy_kind::pinned);
  EXPECT_EQ(c.tensor_strategies, (std::vector<ferry::tensor_strategy>{{"indices", strategy_kind::mapped}}));
  EXPECT_EQ(c.inflight, 2);  // not "auto": as configured
  EXPECT_EQ(why.rfind("auto: pinned (indices=mapped) with 2 in-flight slots on GPU 0: measured on this machine", 0), 0U)
      << why;
  EXPECT_NE(why.find("; per tensor: 'table' (input, 16.8 MB): pinned"), std::string::npos) << why;
  EXPECT_NE(why.find("; 'indices' (input, 16.4 KB): mapped, 11.6 us against 21.3 us"), std::string::npos) << why;
  EXPECT_NE(why.find("; 'rows' (output, 16.4 KB): pinned"), std::string::npos) << why;
}

// sparse:0.01 reads 41 of its table's 4096 pages: read in place, the table costs 164 KiB over the
// link instead of 16 MiB copied, so the whole request goes mapped.
TEST(ServeAuto, ATableReadAFewRowsAtATimeIsReadInPlace) {
  auto c = parse_model_config(R"({"engine": "sparse:0.01", "strategy": "auto", "input_size": "16MiB"})", "m");
  const auto caps = t::discrete_pcie_caps();
  const std::string why =
      ferry::serve::choose_automatic(c, one_gpu(caps, t::synthetic_profile(caps, copy_has_a_fixed_cost)));
  EXPECT_EQ(c.strategy, strategy_kind::mapped) << why;
  EXPECT_TRUE(c.tensor_strategies.empty()) << why;
  EXPECT_NE(why.find("for 16.8 MB in (168 KB of it read), 164 B out mapped costs"), std::string::npos) << why;
}

TEST(ServeAuto, TensorsTheConfigNamesKeepWhatItSays) {
  auto c = parse_model_config(
      R"({"engine": "sparse:1", "strategy": "auto", "input_size": "16MiB",
          "tensor_strategies": {"indices": "registered", "rows": "mapped"}})",
      "m");
  const auto caps = t::discrete_pcie_caps();
  const std::string why =
      ferry::serve::choose_automatic(c, one_gpu(caps, t::synthetic_profile(caps, copy_has_a_fixed_cost)));
  EXPECT_EQ(c.strategy, strategy_kind::pinned);
  EXPECT_EQ(c.tensor_strategies, (std::vector<ferry::tensor_strategy>{{"indices", strategy_kind::registered},
                                                                      {"rows", strategy_kind::mapped}}));
  EXPECT_NE(why.find("'indices': as tensor_strategies sets it (the pick would be mapped)"), std::string::npos) << why;
}

TEST(ServeAuto, WithoutAProfileNoTensorIsPickedOnItsOwn) {
  auto c = parse_model_config(R"({"engine": "sparse:0.01", "strategy": "auto"})", "m");
  const std::string why = ferry::serve::choose_automatic(c, one_gpu(t::discrete_pcie_caps(), std::nullopt));
  EXPECT_EQ(c.strategy, strategy_kind::pinned);
  EXPECT_TRUE(c.tensor_strategies.empty());
  EXPECT_NE(why.find("'indices' (input, 12 B): pinned, the request's pick (not measured on this machine"),
            std::string::npos)
      << why;
}

TEST(ServeAuto, AModelFileIsPickedForTheWholeRequest) {
  auto c = parse_model_config(R"({"engine": "torch:/models/m.pt2", "strategy": "auto", "input_size": "16MiB"})", "m");
  const auto caps = t::discrete_pcie_caps();
  const std::string why =
      ferry::serve::choose_automatic(c, one_gpu(caps, t::synthetic_profile(caps, copy_has_a_fixed_cost)));
  EXPECT_TRUE(c.tensor_strategies.empty());
  EXPECT_NE(why.find("one strategy for every tensor"), std::string::npos) << why;
}

// tensor_strategies naming no tensor of the engine makes the model unavailable at load, naming
// the tensor and the model (here on the CPU, where nothing moves, as on a GPU); a good one is
// shown in the model's configuration and metadata.
TEST(ServeAuto, TensorStrategiesAreCheckedAtLoadAndShown) {
  const fs::path dir = write_repository(
      "ferry-serve-tensor-strategies",
      {{"plain", R"({"engine": "sparse:0.01", "input_size": 65536})"},
       {"good", R"({"engine": "sparse:0.01", "input_size": 65536,
                    "tensor_strategies": {"indices": "mapped", "rows": "managed-advise"}})"},
       {"typo", R"({"engine": "sparse:0.01", "input_size": 65536, "tensor_strategies": {"indexes": "mapped"}})"}});
  const ferry::serve::execution_platform cpu = cpu_only();
  std::ostringstream log;
  const ferry::serve::model_repository repository(dir, cpu, log);
  fs::remove_all(dir);
  const auto typo = repository.find("typo");
  ASSERT_NE(typo, nullptr);
  EXPECT_FALSE(typo->ready());
  EXPECT_EQ(typo->failure.rfind("model 'typo': tensor_strategies names 'indexes', which is not a tensor of the engine; "
                                "its tensors are: table (input), indices (input), rows (output)",
                                0),
            0U)
      << typo->failure;
  const auto good = repository.find("good");
  ASSERT_NE(good, nullptr);
  ASSERT_TRUE(good->ready()) << good->failure;
  const auto config = ferry::serve::model_config_json(*good);
  EXPECT_EQ(config.at("parameters").at("tensor_strategies").at("string_value"), "indices=mapped,rows=managed-advise");
  EXPECT_EQ(config.at("parameters").at("strategy").at("string_value"), "pinned");
  EXPECT_EQ(ferry::serve::model_metadata_json(*good).at("parameters"), config.at("parameters"));
  // Without overrides the parameter is left out.
  const auto plain = repository.find("plain");
  ASSERT_NE(plain, nullptr);
  ASSERT_TRUE(plain->ready()) << plain->failure;
  EXPECT_FALSE(ferry::serve::model_config_json(*plain).at("parameters").contains("tensor_strategies"));
}

}  // namespace
