// libFuzzer target: the range check every shared-memory tensor passes (checked_range).
//
// Input: the region's size (2 bytes: regions here are real memory, up to 64 KiB), the client's
// offset and byte size (8 bytes each, any value: overflowing sums are the point), then the
// region's name.
//
// The check may refuse only with request_error, and must refuse exactly the ranges that do not
// fit; an accepted range is written through, so ASan sees any byte of it outside the region.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "serve/shm/shm_range.hpp"
#include "serve/vocabulary/request_error.hpp"

#include "fuzz_check.hpp"

namespace {

template <typename T>
T read(const std::uint8_t* data) {
  T value;
  std::memcpy(&value, data, sizeof(T));
  return value;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 18) return -1;
  std::vector<std::byte> region(read<std::uint16_t>(data));
  ferry::serve::shm_ref ref;
  ref.offset = read<std::uint64_t>(data + 2);
  ref.byte_size = read<std::uint64_t>(data + 10);
  ref.region.assign(reinterpret_cast<const char*>(data + 18), size - 18);
  // The truth, in arithmetic that cannot overflow.
  const unsigned __int128 end = static_cast<unsigned __int128>(ref.offset) + ref.byte_size;
  const bool fits = end <= region.size();
  try {
    const std::span<std::byte> range = ferry::serve::checked_range(ref, region, "x");
    FUZZ_REQUIRE(fits);
    FUZZ_REQUIRE(range.size() == ref.byte_size);
    FUZZ_REQUIRE(range.empty() || range.data() == region.data() + ref.offset);
    if (!range.empty()) std::memset(range.data(), 0x5a, range.size());
  } catch (const ferry::serve::request_error& e) {
    FUZZ_REQUIRE(!fits);
    FUZZ_REQUIRE(e.status() == ferry::serve::error_status::bad_request);
  }
  return 0;
}
