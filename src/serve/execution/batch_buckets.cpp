#include "serve/execution/batch_buckets.hpp"

#include <algorithm>

namespace ferry::serve {

std::vector<std::int64_t> default_batch_buckets(std::int64_t max_batch) {
  std::vector<std::int64_t> buckets;
  for (std::int64_t b = 1; b < max_batch; b *= 2) buckets.push_back(b);
  if (max_batch > 0) buckets.push_back(max_batch);
  return buckets;
}

std::size_t bucket_index(std::span<const std::int64_t> buckets, std::int64_t rows) noexcept {
  const auto it = std::lower_bound(buckets.begin(), buckets.end(), rows);
  if (it == buckets.end()) return buckets.empty() ? 0 : buckets.size() - 1;
  return static_cast<std::size_t>(it - buckets.begin());
}

std::int64_t bucket_rows(std::span<const std::int64_t> buckets, std::int64_t rows) noexcept {
  if (buckets.empty()) return rows;
  return std::max(rows, buckets[bucket_index(buckets, rows)]);
}

}  // namespace ferry::serve
