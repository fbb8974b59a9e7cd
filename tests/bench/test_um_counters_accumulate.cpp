// How CUPTI's unified-memory records become um_traffic totals, fed with synthetic records (no
// GPU, no CUPTI call), and what a session says where there is no GPU.
#include <gtest/gtest.h>

#include <cupti_activity.h>

#include <cstdint>
#include <string>

#include "bench/measure/um_counters.hpp"
#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"

namespace {

using ferry::bench::accumulate_copy_record;
using ferry::bench::accumulate_um_record;
using ferry::bench::copy_traffic;
using ferry::bench::um_traffic;

CUpti_ActivityUnifiedMemoryCounter3 um_record(CUpti_ActivityUnifiedMemoryCounterKind counter, std::uint64_t value) {
  CUpti_ActivityUnifiedMemoryCounter3 record{};
  record.kind = CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER;
  record.counterKind = counter;
  record.value = value;
  return record;
}

// CUPTI hands out records as CUpti_Activity and the kind field says what they really are.
bool feed(um_traffic& totals, const CUpti_ActivityUnifiedMemoryCounter3& record) {
  return accumulate_um_record(totals, reinterpret_cast<const CUpti_Activity&>(record));
}

constexpr std::uint64_t mib = std::uint64_t{1} << 20;

TEST(UmCounterAccumulate, BytesAreSummedPerDirection) {
  um_traffic t;
  EXPECT_TRUE(feed(t, um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD, 4096)));
  EXPECT_TRUE(feed(t, um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD, 2 * mib)));
  EXPECT_TRUE(feed(t, um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH, 65536)));
  EXPECT_EQ(t.bytes_host_to_device, 4096 + 2 * mib);
  EXPECT_EQ(t.bytes_device_to_host, 65536U);
  EXPECT_EQ(t.gpu_page_faults, 0U);
  EXPECT_EQ(t.cpu_page_faults, 0U);
}

TEST(UmCounterAccumulate, GpuFaultRecordsAddTheirFaultGroups) {
  um_traffic t;
  EXPECT_TRUE(feed(t, um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, 3)));
  EXPECT_TRUE(feed(t, um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, 1)));
  EXPECT_EQ(t.gpu_page_faults, 4U);
  // A record exists because a page faulted: it never counts for nothing.
  EXPECT_TRUE(feed(t, um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, 0)));
  EXPECT_EQ(t.gpu_page_faults, 5U);
  EXPECT_EQ(t.bytes_host_to_device, 0U);
  EXPECT_EQ(t.cpu_page_faults, 0U);
}

TEST(UmCounterAccumulate, CpuFaultRecordsCountOneEachWhateverTheirValue) {
  um_traffic t;
  // For CPU faults, value is the program counter of the faulting instruction.
  EXPECT_TRUE(feed(t, um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT, 0x7f3a12345678)));
  EXPECT_TRUE(feed(t, um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT, 0)));
  EXPECT_EQ(t.cpu_page_faults, 2U);
  EXPECT_EQ(t.gpu_page_faults, 0U);
  EXPECT_EQ(t.bytes_device_to_host, 0U);
}

TEST(UmCounterAccumulate, OtherCountersAndOtherRecordKindsAreIgnored) {
  um_traffic t;
  EXPECT_FALSE(feed(t, um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING, 4096)));
  EXPECT_FALSE(feed(t, um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP, 4096)));
  EXPECT_FALSE(feed(t, um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD, 4096)));
  EXPECT_FALSE(feed(t, um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_UNKNOWN, 4096)));
  // Same bytes, but not a unified-memory record (a memcpy record would have its own layout).
  auto not_um = um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD, 4096);
  not_um.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  EXPECT_FALSE(feed(t, not_um));
  EXPECT_EQ(t.bytes_host_to_device, 0U);
  EXPECT_EQ(t.bytes_device_to_host, 0U);
  EXPECT_EQ(t.gpu_page_faults, 0U);
  EXPECT_EQ(t.cpu_page_faults, 0U);
}

TEST(UmCounterAccumulate, TotalsAddFieldByField) {
  um_traffic total{.bytes_host_to_device = 1, .bytes_device_to_host = 2, .gpu_page_faults = 3, .cpu_page_faults = 4};
  total +=
      um_traffic{.bytes_host_to_device = 10, .bytes_device_to_host = 20, .gpu_page_faults = 30, .cpu_page_faults = 40};
  EXPECT_EQ(total.bytes_host_to_device, 11U);
  EXPECT_EQ(total.bytes_device_to_host, 22U);
  EXPECT_EQ(total.gpu_page_faults, 33U);
  EXPECT_EQ(total.cpu_page_faults, 44U);
}

TEST(UmCounterSession, NegativeDeviceIsABadArgument) {
  EXPECT_THROW((void)ferry::bench::um_counter_session::start(-1), ferry::invalid_argument);
}

TEST(UmCounterSession, WithoutAGpuStartDocumentsWhyItIsUnavailable) {
  if (ferry::cuda_device_count() > 0) GTEST_SKIP() << "there is a GPU: the gpu tests cover start()";
  auto session = ferry::bench::um_counter_session::start(0);
  EXPECT_FALSE(session.available());
  EXPECT_NE(session.reason().find("no CUDA device"), std::string::npos) << session.reason();
  EXPECT_FALSE(session.take().has_value());
}

// Explicit copies: CUPTI's MEMCPY records, summed by direction; other records are left alone.
CUpti_ActivityMemcpy6 copy_record(CUpti_ActivityMemcpyKind direction, std::uint64_t bytes) {
  CUpti_ActivityMemcpy6 record{};
  record.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  record.copyKind = static_cast<std::uint8_t>(direction);
  record.bytes = bytes;
  return record;
}

bool feed_copy(copy_traffic& totals, const CUpti_ActivityMemcpy6& record) {
  return accumulate_copy_record(totals, reinterpret_cast<const CUpti_Activity&>(record));
}

TEST(CopyCounterAccumulate, BytesAreSummedPerDirection) {
  copy_traffic t;
  EXPECT_TRUE(feed_copy(t, copy_record(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4800000)));
  EXPECT_TRUE(feed_copy(t, copy_record(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4096)));
  EXPECT_TRUE(feed_copy(t, copy_record(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 65536)));
  EXPECT_TRUE(feed_copy(t, copy_record(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 2 * mib)));
  EXPECT_TRUE(feed_copy(t, copy_record(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, 3 * mib)));
  EXPECT_TRUE(feed_copy(t, copy_record(CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, 100)));
  EXPECT_EQ(t.host_to_device, 4800000U + 4096U);
  EXPECT_EQ(t.device_to_host, 65536U);
  EXPECT_EQ(t.device_to_device, 2 * mib);
  EXPECT_EQ(t.peer, 3 * mib);
  EXPECT_EQ(t.other, 100U);
}

TEST(CopyCounterAccumulate, OtherRecordsAreNotCopies) {
  const auto migration = um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD, 4096);
  const auto copy = copy_record(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4096);
  copy_traffic t;
  EXPECT_FALSE(accumulate_copy_record(t, reinterpret_cast<const CUpti_Activity&>(migration)));
  um_traffic u;
  EXPECT_FALSE(accumulate_um_record(u, reinterpret_cast<const CUpti_Activity&>(copy)));
  EXPECT_EQ(t.host_to_device, 0U);
  EXPECT_EQ(u.bytes_host_to_device, 0U);
}

}  // namespace
