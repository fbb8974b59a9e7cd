// copy_streaming: exact copies whatever the alignment of either side, nothing written outside the
// destination, and a size mismatch refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ferry/core/error.hpp"
#include "ferry/memory/streaming_copy.hpp"

namespace {

constexpr std::byte sentinel{0xA5};
constexpr std::size_t guard = 32;  // bytes checked on each side of the destination

// A pattern that differs at every offset and from the sentinel, so a shifted or missed byte shows.
std::vector<std::byte> pattern(std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 7 + 3) % 251);
  return v;
}

// Offset of the first 16-byte aligned byte of `v` at or after `at`.
std::size_t aligned_from(const std::vector<std::byte>& v, std::size_t at) {
  const auto address = reinterpret_cast<std::uintptr_t>(v.data() + at);
  return at + (16 - address % 16) % 16;
}

// Copies `size` bytes from source offset `source_skew` to destination offset `destination_skew`
// (both relative to a 16-byte boundary) and checks the copy and the guard bytes around it.
void check_copy(std::size_t size, std::size_t destination_skew, std::size_t source_skew) {
  const auto source_storage = pattern(size + 16 + 16);
  const std::size_t from = aligned_from(source_storage, 0) + source_skew;
  const std::span<const std::byte> source(source_storage.data() + from, size);

  std::vector<std::byte> destination_storage(guard + 16 + size + guard, sentinel);
  const std::size_t to = aligned_from(destination_storage, guard) + destination_skew;
  ferry::copy_streaming(std::span(destination_storage).subspan(to, size), source);

  for (std::size_t i = 0; i < destination_storage.size(); ++i) {
    const bool inside = i >= to && i < to + size;
    const std::byte expected = inside ? source[i - to] : sentinel;
    ASSERT_EQ(destination_storage[i], expected) << "byte " << i << " (destination at " << to << ", " << size
                                                << " bytes, skews " << destination_skew << "/" << source_skew << ")";
  }
}

TEST(StreamingCopy, CopiesExactlyAtEveryAlignmentAndSmallSize) {
  for (std::size_t size = 0; size <= 300; ++size)
    for (std::size_t destination_skew = 0; destination_skew < 16; ++destination_skew)
      for (std::size_t source_skew = 0; source_skew < 16; ++source_skew) {
        check_copy(size, destination_skew, source_skew);
        if (HasFatalFailure()) return;
      }
}

TEST(StreamingCopy, CopiesALargeOddSizedBuffer) {
  constexpr std::size_t size = (std::size_t{1} << 20) + 13;
  check_copy(size, 0, 0);
  check_copy(size, 3, 11);
  check_copy(size, 15, 1);
}

TEST(StreamingCopy, RefusesDifferentSizes) {
  std::vector<std::byte> destination(4), source(5);
  EXPECT_THROW(ferry::copy_streaming(destination, source), ferry::invalid_argument);
  EXPECT_THROW(ferry::copy_streaming(std::span(destination).first(0), source), ferry::invalid_argument);
}

}  // namespace
