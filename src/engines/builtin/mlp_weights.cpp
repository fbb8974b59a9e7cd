#include "engines/builtin/mlp_weights.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace ferry::builtin {
namespace {

// splitmix64: tiny, fast, and fully specified, unlike std:: distributions whose output differs
// between standard libraries.
class splitmix64 {
 public:
  explicit splitmix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1), from the top 24 bits (exactly representable in float).
  float next_symmetric() {
    const auto bits = static_cast<std::uint32_t>(next() >> 40);
    return static_cast<float>(bits) * (2.0F / 16777216.0F) - 1.0F;
  }

 private:
  std::uint64_t state_;
};

constexpr std::uint64_t weight_seed = 0x6665727279ULL;  // "ferry"

}  // namespace

std::vector<__half> make_mlp_weights(int layers, int width) {
  const auto w = static_cast<std::size_t>(width);
  std::vector<__half> weights(static_cast<std::size_t>(layers) * w * w);
  const float bound = std::sqrt(6.0F / static_cast<float>(width));
  for (int layer = 0; layer < layers; ++layer) {
    // One stream per layer, so a layer's weights do not depend on how many layers precede it.
    splitmix64 random(weight_seed + static_cast<std::uint64_t>(layer));
    __half* matrix = weights.data() + static_cast<std::size_t>(layer) * w * w;
    for (std::size_t i = 0; i < w * w; ++i) matrix[i] = __float2half_rn(random.next_symmetric() * bound);
  }
  return weights;
}

}  // namespace ferry::builtin
