// Profiles as plain data: the JSON round trip, the cache folder, interpolation, and the four ways a
// lookup ends (loaded, missing, stale, corrupt), each with its own message.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ferry/core/error.hpp"
#include "ferry/memory/profile.hpp"
#include "support/synthetic_profile.hpp"

namespace {

using ferry::profile_status;
using ferry::strategy_kind;
using ferry::transfer_use;
namespace fs = std::filesystem;
namespace t = ferry::testing;

// A fresh folder under the test's temporary directory, removed afterwards.
class ProfileFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ferry_profile_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
  fs::path dir_;
};

// Sets an environment variable for one scope and restores it.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~scoped_env() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(Profile, JsonRoundTripKeepsEveryField) {
  const auto caps = t::discrete_pcie_caps();
  const auto p = t::synthetic_profile(caps, t::discrete_model);
  const auto back = ferry::profile_from_json(nlohmann::json::parse(ferry::to_json(p).dump()));
  EXPECT_EQ(ferry::to_json(back), ferry::to_json(p));
  EXPECT_EQ(back.gpu_uuid, caps.uuid);
  EXPECT_EQ(back.link, "PCIe Gen5 x16");
  ASSERT_NE(back.find(strategy_kind::pinned, transfer_use::output), nullptr);
  EXPECT_EQ(back.find(strategy_kind::pinned, transfer_use::output)->points.size(), 4U);
}

TEST(Profile, RefusedStrategiesKeepTheirReason) {
  const auto caps = t::integrated_caps();
  const auto p = t::synthetic_profile(caps, t::integrated_model);
  const auto* managed = p.find(strategy_kind::managed, transfer_use::input_once);
  ASSERT_NE(managed, nullptr);
  EXPECT_NE(managed->refused.find("concurrentManagedAccess=0"), std::string::npos);
  EXPECT_TRUE(managed->points.empty());
  EXPECT_FALSE(ferry::estimate_us(*managed, 1 << 20).has_value());
}

TEST(Profile, EstimatesInterpolateAndHoldTheSmallestSizesCost) {
  ferry::strategy_curve c{.strategy = strategy_kind::pinned,
                          .use = transfer_use::input_once,
                          .refused = {},
                          .points = {{1000, 10, 0}, {3000, 30, 0}, {5000, 40, 0}}};
  EXPECT_DOUBLE_EQ(*ferry::estimate_us(c, 2000), 20);
  EXPECT_DOUBLE_EQ(*ferry::estimate_us(c, 4000), 35);
  EXPECT_DOUBLE_EQ(*ferry::estimate_us(c, 10), 10);    // below the sweep: the fixed cost
  EXPECT_DOUBLE_EQ(*ferry::estimate_us(c, 7000), 50);  // beyond: the last segment's slope
}

TEST(Profile, LinkNamesThePlatformsConnection) {
  EXPECT_EQ(ferry::describe_link(t::discrete_pcie_caps()), "PCIe Gen5 x16");
  EXPECT_EQ(ferry::describe_link(t::integrated_caps()), "integrated (shared DRAM)");
  EXPECT_EQ(ferry::describe_link(t::ats_caps()), "NVLink-C2C (ATS)");
  EXPECT_EQ(ferry::describe_link(t::hmm_caps()), "PCIe Gen5 x16");
}

TEST(Profile, CacheFolderFollowsXdgThenHome) {
  {
    const scoped_env xdg("XDG_CACHE_HOME", "/tmp/xdg");
    EXPECT_EQ(ferry::profile_directory(), fs::path("/tmp/xdg/ferry/profiles"));
    EXPECT_EQ(ferry::default_profile_path(t::discrete_pcie_caps()),
              fs::path("/tmp/xdg/ferry/profiles/GPU-00000000-0000-0000-0000-000000000001.json"));
  }
  const scoped_env no_xdg("XDG_CACHE_HOME", nullptr);
  {
    const scoped_env home("HOME", "/home/someone");
    EXPECT_EQ(ferry::profile_directory(), fs::path("/home/someone/.cache/ferry/profiles"));
  }
  const scoped_env no_home("HOME", nullptr);
  EXPECT_THROW((void)ferry::profile_directory(), ferry::invalid_argument);
}

TEST_F(ProfileFiles, SavedProfileLoadsBack) {
  const auto caps = t::discrete_pcie_caps();
  const auto path = dir_ / "nested" / (caps.uuid + ".json");
  ferry::save_profile(t::synthetic_profile(caps, t::discrete_model), path);
  const auto found = ferry::load_profile(path, caps);
  EXPECT_EQ(found.status, profile_status::loaded) << found.message;
  ASSERT_TRUE(found.profile.has_value());
  EXPECT_EQ(found.profile->host, "testhost");
  EXPECT_NE(found.message.find("measured 2026-11-30T12:00:00Z on testhost"), std::string::npos) << found.message;
  EXPECT_FALSE(fs::exists(path.string() + ".partial"));
}

TEST_F(ProfileFiles, MissingIsItsOwnCase) {
  const auto found = ferry::load_profile(dir_ / "absent.json", t::discrete_pcie_caps());
  EXPECT_EQ(found.status, profile_status::missing);
  EXPECT_FALSE(found.profile.has_value());
  EXPECT_NE(found.message.find("no profile for GPU 0"), std::string::npos) << found.message;
  EXPECT_NE(found.message.find("ferry calibrate"), std::string::npos) << found.message;
}

TEST_F(ProfileFiles, AnotherDriverMakesItStale) {
  auto caps = t::discrete_pcie_caps();
  const auto path = dir_ / "p.json";
  ferry::save_profile(t::synthetic_profile(caps, t::discrete_model), path);
  caps.driver_version = 13010;
  const auto found = ferry::load_profile(path, caps);
  EXPECT_EQ(found.status, profile_status::stale);
  EXPECT_FALSE(found.profile.has_value());
  EXPECT_NE(
      found.message.find("is stale and was not used: it was measured under CUDA driver 13.0, this machine runs 13.1"),
      std::string::npos)
      << found.message;
}

TEST_F(ProfileFiles, AnotherGpuMakesItStale) {
  const auto path = dir_ / "p.json";
  ferry::save_profile(t::synthetic_profile(t::discrete_pcie_caps(), t::discrete_model), path);
  const auto found = ferry::load_profile(path, t::hmm_caps());
  EXPECT_EQ(found.status, profile_status::stale);
  EXPECT_NE(found.message.find("it was measured on GPU GPU-00000000-0000-0000-0000-000000000001 (NVIDIA H200)"),
            std::string::npos)
      << found.message;
}

TEST_F(ProfileFiles, AnotherLinkMakesItStale) {
  auto caps = t::discrete_pcie_caps();
  const auto path = dir_ / "p.json";
  ferry::save_profile(t::synthetic_profile(caps, t::discrete_model), path);
  caps.pcie->max_generation = 4;  // the card was moved to a slower slot
  const auto found = ferry::load_profile(path, caps);
  EXPECT_EQ(found.status, profile_status::stale);
  EXPECT_NE(found.message.find("measured over PCIe Gen5 x16, the link is now PCIe Gen4 x16"), std::string::npos)
      << found.message;
}

TEST_F(ProfileFiles, CorruptFilesAreRefusedWithTheProblem) {
  const auto caps = t::discrete_pcie_caps();
  const auto truncated = dir_ / "truncated.json";
  write(truncated, ferry::to_json(t::synthetic_profile(caps, t::discrete_model)).dump().substr(0, 200));
  auto found = ferry::load_profile(truncated, caps);
  EXPECT_EQ(found.status, profile_status::corrupt);
  EXPECT_NE(found.message.find("is corrupt and was not used"), std::string::npos) << found.message;

  auto doc = ferry::to_json(t::synthetic_profile(caps, t::discrete_model));
  doc.erase("gpu_uuid");
  const auto incomplete = dir_ / "incomplete.json";
  write(incomplete, doc.dump());
  found = ferry::load_profile(incomplete, caps);
  EXPECT_EQ(found.status, profile_status::corrupt);
  EXPECT_NE(found.message.find("'gpu_uuid' is missing"), std::string::npos) << found.message;

  doc = ferry::to_json(t::synthetic_profile(caps, t::discrete_model));
  doc["curves"][0]["strategy"] = "teleport";
  write(incomplete, doc.dump());
  found = ferry::load_profile(incomplete, caps);
  EXPECT_EQ(found.status, profile_status::corrupt);
  EXPECT_NE(found.message.find("teleport"), std::string::npos) << found.message;

  doc = ferry::to_json(t::synthetic_profile(caps, t::discrete_model));
  doc["format"] = 99;
  write(incomplete, doc.dump());
  found = ferry::load_profile(incomplete, caps);
  EXPECT_EQ(found.status, profile_status::corrupt);
  EXPECT_NE(found.message.find("format 99"), std::string::npos) << found.message;
}

}  // namespace
