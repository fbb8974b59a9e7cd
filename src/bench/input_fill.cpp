#include "bench/input_fill.hpp"

#include <cstring>

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

template <class T, class Make>
void fill_words(std::span<std::byte> host, splitmix64& rng, Make make) {
  const std::size_t n = host.size() / sizeof(T);
  auto* out = reinterpret_cast<T*>(host.data());  // host views are page- or 256-byte aligned
  for (std::size_t i = 0; i < n; ++i) out[i] = make(rng.next());
  // A trailing partial element (odd byte sizes) still gets fresh bytes.
  for (std::size_t i = n * sizeof(T); i < host.size(); ++i)
    host[i] = static_cast<std::byte>(rng.next());
}

}  // namespace

void fill_fresh(std::span<std::byte> host, const tensor_spec& spec, std::uint64_t seed) {
  splitmix64 rng{seed * 0x2545F4914F6CDD1DULL + 1};
  if (spec.index_bound) {
    const auto bound = static_cast<std::uint64_t>(*spec.index_bound > 0 ? *spec.index_bound : 1);
    if (spec.type == dtype::i64) {
      fill_words<std::int64_t>(host, rng, [bound](std::uint64_t r) { return static_cast<std::int64_t>(r % bound); });
    } else {
      fill_words<std::int32_t>(host, rng, [bound](std::uint64_t r) { return static_cast<std::int32_t>(r % bound); });
    }
    return;
  }
  switch (spec.type) {
    case dtype::f32: {
      // Floats in [-0.5, 0.5) from a multiplicative hash of the index and the seed: fresh per
      // request, and a loop the compiler vectorises, so the fill runs near memory speed.
      const std::size_t n = host.size() / sizeof(float);
      auto* out = reinterpret_cast<float*>(host.data());
      const auto salt = static_cast<std::uint32_t>(rng.next());
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t h = (static_cast<std::uint32_t>(i) ^ salt) * 2654435761U;
        out[i] = static_cast<float>(h >> 8) * (1.0F / 16777216.0F) - 0.5F;
      }
      for (std::size_t i = n * sizeof(float); i < host.size(); ++i) host[i] = std::byte{0};
      return;
    }
    case dtype::f16:
    case dtype::bf16: {
      // Halves of magnitude in [0.5, 1) with a random sign and mantissa, from the same
      // vectorisable hash (exponent bits fixed: never Inf, NaN or denormal), two halves per
      // 32-bit word so the loop runs as fast as the f32 one.
      const std::uint32_t keep16 = spec.type == dtype::bf16 ? 0x807FU : 0x83FFU;
      const std::uint32_t exponent16 = spec.type == dtype::bf16 ? 0x3F00U : 0x3800U;
      const std::uint32_t keep = keep16 | (keep16 << 16);
      const std::uint32_t exponent = exponent16 | (exponent16 << 16);
      const std::size_t pairs = host.size() / sizeof(std::uint32_t);
      auto* out = reinterpret_cast<std::uint32_t*>(host.data());
      const auto salt = static_cast<std::uint32_t>(rng.next());
      for (std::size_t i = 0; i < pairs; ++i) {
        const std::uint32_t h = (static_cast<std::uint32_t>(i) ^ salt) * 2654435761U;
        out[i] = (h & keep) | exponent;
      }
      if (pairs * 4 + 2 <= host.size()) {  // an odd count of halves: the last one on its own
        const std::uint16_t last = static_cast<std::uint16_t>(exponent16 | (salt & keep16));
        std::memcpy(host.data() + pairs * 4, &last, sizeof last);
      }
      if (host.size() % 2 != 0) host.back() = std::byte{0};
      return;
    }
    case dtype::boolean:
      fill_words<std::uint8_t>(host, rng, [](std::uint64_t r) { return static_cast<std::uint8_t>(r & 1); });
      return;
    default: {  // u8, i8, i32, i64 without a bound: any bit pattern is a valid value
      const std::size_t n = host.size() / sizeof(std::uint32_t);
      auto* out = reinterpret_cast<std::uint32_t*>(host.data());
      const auto salt = static_cast<std::uint32_t>(rng.next());
      for (std::size_t i = 0; i < n; ++i) out[i] = ((static_cast<std::uint32_t>(i) ^ salt) * 2654435761U) ^ salt;
      for (std::size_t i = n * sizeof(std::uint32_t); i < host.size(); ++i)
        host[i] = static_cast<std::byte>(rng.next());
      return;
    }
  }
}

}  // namespace ferry::bench
