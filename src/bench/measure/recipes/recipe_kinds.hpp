// The recipe families, one file each; make_recipe picks among them. Private to recipes/.
#pragma once

#include <memory>
#include <vector>

#include "bench/measure/recipes/recipe.hpp"

namespace ferry::bench::recipes {

// pageable, pinned, registered and staged: explicit copies on one stream.
std::unique_ptr<recipe> make_copy_recipe(strategy_kind strategy, engine& eng, const std::vector<tensor_spec>& io,
                                         int device);
// mapped, registered-mapped and system: the engine reads and writes host memory in place.
std::unique_ptr<recipe> make_zero_copy_recipe(strategy_kind strategy, engine& eng, const std::vector<tensor_spec>& io,
                                              int device);
// managed, managed-prefetch and managed-advise: one cudaMallocManaged allocation per tensor.
std::unique_ptr<recipe> make_managed_recipe(strategy_kind strategy, engine& eng, const std::vector<tensor_spec>& io,
                                            int device);
// device: the floor, on inputs copied to the GPU outside the timing.
std::unique_ptr<recipe> make_device_recipe(engine& eng, const std::vector<tensor_spec>& io, int device);

}  // namespace ferry::bench::recipes
