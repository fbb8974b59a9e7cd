#include "bench/measure/input_fill.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "ferry/memory/streaming_copy.hpp"

namespace ferry::bench {
namespace {

// Streaming mode generates this much at a time into a per-thread scratch that stays in the L2
// cache, then streams it into place. A multiple of 8 bytes, so pieces end on element boundaries.
constexpr std::size_t scratch_words = 8192;  // 64 KiB

}  // namespace

void fill_fresh(std::span<std::byte> host, const tensor_spec& spec, std::uint64_t seed, input_writes writes,
                const input_data& data) {
  if (writes == input_writes::cached) {
    data.fill(host, 0, spec, seed);
    return;
  }
  thread_local std::vector<std::uint64_t> scratch(scratch_words);  // uint64_t: 8-byte aligned
  const auto chunk = std::as_writable_bytes(std::span(scratch));
  for (std::size_t offset = 0; offset < host.size(); offset += chunk.size()) {
    const auto piece = chunk.first(std::min(chunk.size(), host.size() - offset));
    data.fill(piece, offset, spec, seed);
    copy_streaming(host.subspan(offset, piece.size()), piece);
  }
}

std::uint64_t read_every_byte(std::span<const std::byte> output) noexcept {
  std::uint64_t sum = 0;
  const std::size_t words = output.size() / 8;
  for (std::size_t k = 0; k < words; ++k) {
    std::uint64_t w;
    std::memcpy(&w, output.data() + 8 * k, 8);
    sum += w;
  }
  for (std::size_t k = words * 8; k < output.size(); ++k) sum += static_cast<std::uint8_t>(output[k]);
  return sum;
}

}  // namespace ferry::bench
