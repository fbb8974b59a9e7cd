// `ferry info` on a multi-GPU host, without a GPU: the peer-access part of the JSON record and
// its text, built from synthetic device records and peer links.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferry/device/peer_access.hpp"
#include "ferry/info/info_report.hpp"
#include "support/synthetic_caps.hpp"

namespace {

std::vector<ferry::device_caps> two_h200() {
  auto a = ferry::testing::h200_like();
  auto b = ferry::testing::h200_like();
  b.ordinal = 1;
  b.pci_bus_id = "0000:c1:00.0";
  return {a, b};
}

ferry::peer_link link(int from, int to, bool can_access, bool enabled, std::string error = {}) {
  ferry::peer_link l;
  l.from = from;
  l.to = to;
  l.can_access = can_access;
  l.enabled = enabled;
  l.error = std::move(error);
  return l;
}

std::vector<ferry::peer_link> measured_pair() {
  auto forward = link(0, 1, true, true);
  forward.bandwidth = ferry::peer_bandwidth{
      .gbps_median = 51.25, .gbps_best = 52.5, .bytes = std::size_t{256} << 20, .repetitions = 10};
  auto back = link(1, 0, true, false, "cudaDeviceEnablePeerAccess(0) on GPU 1: cudaErrorTooManyPeers (x)");
  return {forward, back};
}

TEST(InfoPeers, OneGpuHasNoPeerSection) {
  const auto info = ferry::build_info_json({13000, 13000}, {ferry::testing::h200_like()});
  EXPECT_FALSE(info.contains("peer_access"));
  EXPECT_EQ(ferry::render_info_text(info).find("Peer access"), std::string::npos);
}

TEST(InfoPeers, JsonCarriesEveryPairWithAccessAndBandwidth) {
  const auto info = ferry::build_info_json({13000, 13000}, two_h200(), {}, measured_pair());
  ASSERT_TRUE(info.contains("peer_access"));
  const auto& peers = info.at("peer_access");
  ASSERT_EQ(peers.size(), 2U);
  EXPECT_EQ(peers[0].at("from"), 0);
  EXPECT_EQ(peers[0].at("to"), 1);
  EXPECT_TRUE(peers[0].at("can_access").get<bool>());
  EXPECT_TRUE(peers[0].at("enabled").get<bool>());
  EXPECT_TRUE(peers[0].at("error").is_null());
  EXPECT_DOUBLE_EQ(peers[0].at("bandwidth").at("gbps_median").get<double>(), 51.25);
  EXPECT_DOUBLE_EQ(peers[0].at("bandwidth").at("gbps_best").get<double>(), 52.5);
  EXPECT_EQ(peers[0].at("bandwidth").at("bytes").get<std::size_t>(), std::size_t{256} << 20);
  EXPECT_EQ(peers[0].at("bandwidth").at("repetitions"), 10);
  EXPECT_FALSE(peers[1].at("enabled").get<bool>());
  EXPECT_NE(peers[1].at("error").get<std::string>().find("TooManyPeers"), std::string::npos);
  EXPECT_TRUE(peers[1].at("bandwidth").is_null());
}

TEST(InfoPeers, TextShowsEachDirectionWithItsRateOrWhyNot) {
  const std::string text =
      ferry::render_info_text(ferry::build_info_json({13000, 13000}, two_h200(), {}, measured_pair()));
  const auto section = text.find("Peer access (GPU to GPU)");
  ASSERT_NE(section, std::string::npos) << text;
  const std::string peers = text.substr(section);
  EXPECT_NE(peers.find("GPU 0 -> GPU 1"), std::string::npos) << peers;
  // Long values wrap onto the next line, so look for pieces that stay on one.
  EXPECT_NE(peers.find("peer access enabled; cudaMemcpyPeerAsync 51.2 GB/s median, 52.5 best"), std::string::npos)
      << peers;
  EXPECT_NE(peers.find("copies of 268 MB)"), std::string::npos) << peers;
  EXPECT_NE(peers.find("GPU 1 -> GPU 0"), std::string::npos) << peers;
  EXPECT_NE(peers.find("possible but not enabled"), std::string::npos) << peers;
  EXPECT_NE(peers.find("TooManyPeers"), std::string::npos) << peers;
  EXPECT_NE(peers.find("not measured"), std::string::npos) << peers;
}

TEST(InfoPeers, PairsWithoutAccessSayTheHostStagesTheCopies) {
  const std::vector<ferry::peer_link> none{link(0, 1, false, false), link(1, 0, false, false)};
  const std::string text = ferry::render_info_text(ferry::build_info_json({13000, 13000}, two_h200(), {}, none));
  EXPECT_NE(text.find("cudaDeviceCanAccessPeer=0"), std::string::npos) << text;
}

}  // namespace
