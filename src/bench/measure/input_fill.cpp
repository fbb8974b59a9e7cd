#include "bench/measure/input_fill.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "ferry/streaming_copy.hpp"

namespace ferry::bench {
namespace {

// splitmix64: tiny, fast, good enough to make every request's input different.
struct splitmix64 {
  std::uint64_t state;
  std::uint64_t next() noexcept {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};

// The multiplicative hash behind the vectorised fills: word `i` of the whole input from the salt.
constexpr std::uint32_t hash(std::size_t i, std::uint32_t salt) noexcept {
  return (static_cast<std::uint32_t>(i) ^ salt) * 2654435761U;
}

template <class T, class Make>
void fill_words(std::span<std::byte> piece, splitmix64& rng, Make make) {
  const std::size_t n = piece.size() / sizeof(T);
  auto* out = reinterpret_cast<T*>(piece.data());  // pieces are 8-byte aligned
  for (std::size_t i = 0; i < n; ++i) out[i] = make(rng.next());
  // A trailing partial element (odd byte sizes) still gets fresh bytes.
  for (std::size_t i = n * sizeof(T); i < piece.size(); ++i) piece[i] = static_cast<std::byte>(rng.next());
}

// One input's values, written piece by piece in order: write(piece, first_byte) fills bytes
// [first_byte, first_byte + piece.size()) of the whole input. Every piece but the last starts and
// ends on an 8-byte boundary, so it holds whole elements of any dtype; the hash fills index by the
// whole input's word, and the sequential rng carries over from piece to piece. One piece or many,
// the bytes are the same.
class input_generator {
 public:
  input_generator(const tensor_spec& spec, std::uint64_t seed) : spec_(spec), rng_{seed * 0x2545F4914F6CDD1DULL + 1} {
    if (!spec.index_bound && spec.type != dtype::boolean) salt_ = static_cast<std::uint32_t>(rng_.next());
  }

  void write(std::span<std::byte> piece, std::size_t first_byte) {
    if (spec_.index_bound) {
      const auto bound = static_cast<std::uint64_t>(*spec_.index_bound > 0 ? *spec_.index_bound : 1);
      if (spec_.type == dtype::i64) {
        fill_words<std::int64_t>(piece, rng_,
                                 [bound](std::uint64_t r) { return static_cast<std::int64_t>(r % bound); });
      } else {
        fill_words<std::int32_t>(piece, rng_,
                                 [bound](std::uint64_t r) { return static_cast<std::int32_t>(r % bound); });
      }
      return;
    }
    const std::size_t first_word = first_byte / sizeof(std::uint32_t);
    const std::size_t words = piece.size() / sizeof(std::uint32_t);
    switch (spec_.type) {
      case dtype::f32: {
        // Floats in [-0.5, 0.5) from the hash: fresh per request, and a loop the compiler
        // vectorises, so the fill runs near memory speed.
        auto* out = reinterpret_cast<float*>(piece.data());
        for (std::size_t i = 0; i < words; ++i)
          out[i] = static_cast<float>(hash(first_word + i, salt_) >> 8) * (1.0F / 16777216.0F) - 0.5F;
        std::fill(piece.begin() + static_cast<std::ptrdiff_t>(words * 4), piece.end(), std::byte{0});
        return;
      }
      case dtype::f16:
      case dtype::bf16: {
        // Halves of magnitude in [0.5, 1) with a random sign and mantissa, from the same hash
        // (exponent bits fixed: never Inf, NaN or denormal), two halves per 32-bit word so the
        // loop runs as fast as the f32 one.
        const std::uint32_t keep16 = spec_.type == dtype::bf16 ? 0x807FU : 0x83FFU;
        const std::uint32_t exponent16 = spec_.type == dtype::bf16 ? 0x3F00U : 0x3800U;
        const std::uint32_t keep = keep16 | (keep16 << 16);
        const std::uint32_t exponent = exponent16 | (exponent16 << 16);
        auto* out = reinterpret_cast<std::uint32_t*>(piece.data());
        for (std::size_t i = 0; i < words; ++i) out[i] = (hash(first_word + i, salt_) & keep) | exponent;
        if (words * 4 + 2 <= piece.size()) {  // an odd count of halves: the last one on its own
          const auto last = static_cast<std::uint16_t>(exponent16 | (salt_ & keep16));
          std::memcpy(piece.data() + words * 4, &last, sizeof last);
        }
        if (piece.size() % 2 != 0) piece.back() = std::byte{0};
        return;
      }
      case dtype::boolean:
        fill_words<std::uint8_t>(piece, rng_, [](std::uint64_t r) { return static_cast<std::uint8_t>(r & 1); });
        return;
      default: {  // u8, i8, i32, i64 without a bound: any bit pattern is a valid value
        auto* out = reinterpret_cast<std::uint32_t*>(piece.data());
        for (std::size_t i = 0; i < words; ++i) out[i] = hash(first_word + i, salt_) ^ salt_;
        for (std::size_t i = words * 4; i < piece.size(); ++i) piece[i] = static_cast<std::byte>(rng_.next());
        return;
      }
    }
  }

 private:
  const tensor_spec& spec_;
  splitmix64 rng_;
  std::uint32_t salt_ = 0;  // the hash fills' per-request salt; the rng's first draw
};

// Streaming mode generates this much at a time into a per-thread scratch that stays in the L2
// cache, then streams it into place. A multiple of 8 bytes, so pieces end on element boundaries.
constexpr std::size_t scratch_words = 8192;  // 64 KiB

}  // namespace

void fill_fresh(std::span<std::byte> host, const tensor_spec& spec, std::uint64_t seed, input_writes writes) {
  input_generator generator(spec, seed);
  if (writes == input_writes::cached) {
    generator.write(host, 0);
    return;
  }
  thread_local std::vector<std::uint64_t> scratch(scratch_words);  // uint64_t: 8-byte aligned
  const auto chunk = std::as_writable_bytes(std::span(scratch));
  for (std::size_t offset = 0; offset < host.size(); offset += chunk.size()) {
    const auto piece = chunk.first(std::min(chunk.size(), host.size() - offset));
    generator.write(piece, offset);
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
