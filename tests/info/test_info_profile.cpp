// `ferry info` with a profile: the figures measured on this machine with their date and link, one
// recommendation (the profile's pick; the platform rules only without a profile), and each lookup
// failure in its own words.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "ferry/info/info_report.hpp"
#include "support/synthetic_profile.hpp"

namespace {

namespace t = ferry::testing;

const ferry::cuda_versions cuda13{13000, 13000};

std::string collapse(const std::string& text) {
  std::istringstream words(text);
  std::string out;
  for (std::string w; words >> w;) out += (out.empty() ? "" : " ") + w;
  return out;
}

ferry::profile_lookup loaded(const ferry::device_caps& caps, const t::cost_model& model) {
  return {.status = ferry::profile_status::loaded,
          .path = "/cache/p.json",
          .profile = t::synthetic_profile(caps, model),
          .message = "profile /cache/p.json measured ..."};
}

TEST(InfoProfile, JsonCarriesTheMeasuredFiguresAndTheRulesSource) {
  const auto caps = t::discrete_pcie_caps();
  const auto info = ferry::build_info_json(cuda13, {caps}, {}, {}, {{0, loaded(caps, t::discrete_model)}});
  const auto& dev = info.at("devices").at(0);
  EXPECT_EQ(dev.at("recommendation").at("source"),
            "measured on this machine (its profile), for a request of 4 MB in and out");
  // The profile's pick, as ferry::choose makes it: 4 MB each way is copied pinned on this model.
  EXPECT_EQ(dev.at("recommendation").at("recommended"), "pinned");
  EXPECT_NE(dev.at("recommendation").at("reasoning").get<std::string>().find("measured"), std::string::npos);
  const auto& p = dev.at("profile");
  EXPECT_EQ(p.at("status"), "loaded");
  EXPECT_EQ(p.at("date"), "2026-11-30T12:00:00Z");
  EXPECT_EQ(p.at("link"), "PCIe Gen5 x16");
  EXPECT_EQ(p.at("driver"), "13.0");
  ASSERT_EQ(p.at("uses").size(), 3U);
  const auto& once = p.at("uses").at(0);
  EXPECT_EQ(once.at("use"), "input-once");
  ASSERT_EQ(once.at("sizes").size(), 4U);
  // 64 KiB read once: mapped (18 + 1.4 us) tied with managed-advise; 256 MiB: pinned.
  EXPECT_EQ(once.at("sizes").at(0).at("best"), "mapped");
  EXPECT_EQ(once.at("sizes").at(0).at("next"), "managed-advise");
  EXPECT_EQ(once.at("sizes").at(3).at("best"), "pinned");
  EXPECT_EQ(p.at("uses").at(1).at("sizes").at(0).at("best"), "pinned");  // re-read: copy once
  EXPECT_EQ(p.at("inflight").at(0).at("depth"), 3);
  EXPECT_EQ(p.at("refused").at(0).at("strategy"), "system");
}

TEST(InfoProfile, TextShowsWhatWasMeasuredHereAndOneRecommendation) {
  const auto caps = t::discrete_pcie_caps();
  const std::string raw =
      ferry::render_info_text(ferry::build_info_json(cuda13, {caps}, {}, {}, {{0, loaded(caps, t::discrete_model)}}));
  const std::string text = collapse(raw);
  for (const char* phrase :
       {"measured on this machine 2026-11-30T12:00:00Z (testhost, PCIe Gen5 x16, CUDA driver 13.0, quick sweep)",
        "input-once 65.5 KB: mapped 19 us (next managed-advise 19 us);",
        "268 MB: pinned 5.39 ms (next registered 5.39 ms)",
        "in-flight 3 slots for pinned at 1.05 MB (more did not raise throughput)",
        "refused system: the device cannot access pageable host memory",
        "advice (measured on this machine, for a request of 4 MB in and out)", "recommended pinned with"})
    EXPECT_NE(text.find(phrase), std::string::npos) << phrase << "\n" << raw;
  // One answer: no platform rules beside the measured pick.
  EXPECT_EQ(text.find("platform rules"), std::string::npos) << raw;
  std::istringstream lines(raw);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100U) << line;
}

TEST(InfoProfile, WithoutAProfileTheRulesAreLabelledAndTheReasonShown) {
  const auto caps = t::integrated_caps();
  const ferry::profile_lookup missing{.status = ferry::profile_status::missing,
                                      .path = "/cache/x.json",
                                      .profile = {},
                                      .message = "no profile for GPU 1 at /cache/x.json"};
  const auto info = ferry::build_info_json(cuda13, {caps}, {}, {}, {{1, missing}});
  EXPECT_EQ(info.at("devices").at(0).at("profile").at("status"), "missing");
  EXPECT_FALSE(info.at("devices").at(0).at("profile").contains("uses"));
  const std::string text = collapse(ferry::render_info_text(info));
  EXPECT_NE(text.find("profile no profile for GPU 1 at /cache/x.json"), std::string::npos) << text;
  EXPECT_NE(text.find("platform rules (not measured on this machine)"), std::string::npos) << text;
  EXPECT_EQ(text.find("measured on this machine 20"), std::string::npos) << text;
}

TEST(InfoProfile, NotLookedUpIsNull) {
  const auto info = ferry::build_info_json(cuda13, {t::discrete_pcie_caps()});
  EXPECT_TRUE(info.at("devices").at(0).at("profile").is_null());
}

}  // namespace
