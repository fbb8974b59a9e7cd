// Constructors of the individual built-in workloads, one source file each; builtin_factory.cpp
// turns a spec string into one of these calls. Arguments are already validated there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "ferry/engines/builtin.hpp"

namespace ferry::builtin {

// f32 [elements] -> f32 [elements], out = in * 2 + 1.
[[nodiscard]] std::unique_ptr<host_reference_engine> make_touch_engine(std::size_t elements);

// f32 [elements] -> f32 [reduce_buckets] chunk sums, reading the input `passes` times (the sums
// are those of one pass).
[[nodiscard]] std::unique_ptr<host_reference_engine> make_reduce_engine(std::size_t elements, int passes = 1);

// table f32 [elements] + indices i32 [rows] -> rows f32 [rows] page sums.
[[nodiscard]] std::unique_ptr<host_reference_engine> make_sparse_engine(std::string name, std::size_t elements,
                                                                        std::int64_t rows);

// f16 [batch, width] -> f16 [batch, width] through `layers` relu(x . W) layers.
[[nodiscard]] std::unique_ptr<host_reference_engine> make_mlp_engine(std::string name, int layers, int width,
                                                                     std::int64_t default_batch);

}  // namespace ferry::builtin
