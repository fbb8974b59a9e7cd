// A model's batch buckets: the batch sizes its engine runs at, a batch running at the smallest
// that holds its rows (padded up to it, the padding never answered), as vLLM and TensorRT-LLM pad
// to the nearest captured size. Pure; the batcher weighs buckets, the executor runs at them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ferry::serve {

// Powers of two up to max_batch, and max_batch itself (1, 2, 4, 8, 16 for 16; 1, 2, 4, 8, 10 for
// 10); none for a model that does not batch (max_batch 0).
[[nodiscard]] std::vector<std::int64_t> default_batch_buckets(std::int64_t max_batch);

// The index of the smallest bucket that holds `rows` (the last when none does: validation caps a
// batch at max_batch, the last bucket).
[[nodiscard]] std::size_t bucket_index(std::span<const std::int64_t> buckets, std::int64_t rows) noexcept;

// The rows a batch of `rows` runs at: its bucket's, or `rows` itself when there are no buckets.
[[nodiscard]] std::int64_t bucket_rows(std::span<const std::int64_t> buckets, std::int64_t rows) noexcept;

}  // namespace ferry::serve
