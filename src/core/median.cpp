#include "core/median.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace ferry::core {

double median(std::span<const double> samples) {
  if (samples.empty()) return 0;
  std::vector<double> copy(samples.begin(), samples.end());
  const std::size_t mid = copy.size() / 2;
  std::nth_element(copy.begin(), copy.begin() + static_cast<std::ptrdiff_t>(mid), copy.end());
  const double upper = copy[mid];
  if (copy.size() % 2 == 1) return upper;
  // Even count: everything left of mid is <= copy[mid]; the largest of those is the other middle.
  const double lower = *std::max_element(copy.begin(), copy.begin() + static_cast<std::ptrdiff_t>(mid));
  return lower + 0.5 * (upper - lower);
}

}  // namespace ferry::core
