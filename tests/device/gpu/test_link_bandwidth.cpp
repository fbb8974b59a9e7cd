// The link peak on a real GPU, and the info record of the real device.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <string>

#include <nlohmann/json.hpp>

#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/device/link_bandwidth.hpp"
#include "ferry/info/info_report.hpp"

namespace {

TEST(LinkBandwidth, MeasuresBothDirectionsOnDeviceZero) {
  const auto link = ferry::measure_link_bandwidth_blocking(0);
  // Even PCIe Gen3 x4 exceeds 1 GB/s; less means the measurement itself is broken.
  EXPECT_GT(link.h2d_gbps_median, 1.0);
  EXPECT_GT(link.d2h_gbps_median, 1.0);
  EXPECT_GE(link.h2d_gbps_best, link.h2d_gbps_median);
  EXPECT_GE(link.d2h_gbps_best, link.d2h_gbps_median);
  EXPECT_GT(link.bytes, 0U);
  EXPECT_LE(link.bytes, std::size_t{256} << 20);
  EXPECT_EQ(link.repetitions, 20);
}

TEST(LinkBandwidth, HonoursSmallerRequests) {
  ferry::link_bandwidth_options options;
  options.bytes = std::size_t{32} << 20;
  options.repetitions = 5;
  const auto link = ferry::measure_link_bandwidth_blocking(0, options);
  EXPECT_EQ(link.bytes, options.bytes);
  EXPECT_EQ(link.repetitions, 5);
  EXPECT_GT(link.h2d_gbps_median, 1.0);
}

TEST(LinkBandwidth, RejectsAMissingDevice) {
  EXPECT_THROW((void)ferry::measure_link_bandwidth_blocking(ferry::cuda_device_count()), ferry::invalid_argument);
}

TEST(InfoReport, RealDeviceCarriesItsNameAndMeasurement) {
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  const auto devices = ferry::query_all_devices();
  const ferry::link_measurements measured{{0, ferry::measure_link_bandwidth_blocking(0)}};
  const auto info = ferry::build_info_json(ferry::query_cuda_versions(), devices, measured);

  ASSERT_EQ(info.at("devices").size(), devices.size());
  const auto& dev = info.at("devices").at(0);
  EXPECT_EQ(dev.at("name"), std::string(prop.name));
  EXPECT_EQ(dev.at("compute_capability"), std::to_string(prop.major) + "." + std::to_string(prop.minor));
  EXPECT_EQ(dev.at("multiprocessors"), prop.multiProcessorCount);
  EXPECT_GT(dev.at("link_bandwidth").at("h2d_gbps_median").get<double>(), 1.0);
  EXPECT_NE(info.at("cuda").at("driver"), "none");

  const std::string text = ferry::render_info_text(info);
  EXPECT_NE(text.find(prop.name), std::string::npos) << text;
}

}  // namespace
