#include "bench/measure/recipes/recipe.hpp"

#include "bench/measure/recipes/recipe_kinds.hpp"
#include "core/scoped_device.hpp"
#include "ferry/core/error.hpp"

namespace ferry::bench {

void recipe::bind(engine& eng, const std::vector<tensor_spec>& io) {
  context_ = eng.make_context(io);
  for (const auto* group : {&inputs_, &outputs_})
    for (const tensor& t : *group) context_->bind(t.spec.name, t.device);
}

std::unique_ptr<recipe> make_recipe(strategy_kind strategy, engine& eng, const std::vector<tensor_spec>& io,
                                    const device_caps& caps, oversubscription managed_policy) {
  if (auto reason = unavailable_reason(strategy, caps))
    throw unsupported("recipe '" + std::string(to_string(strategy)) + "' is not available: " + *reason);
  if (properties(strategy).uses_managed_memory) {
    std::size_t bytes = 0;
    for (const auto& t : io) bytes += t.bytes();
    if (auto refusal = managed_request_refusal(bytes, query_free_memory(caps.ordinal), managed_policy))
      throw unsupported("recipe '" + std::string(to_string(strategy)) + "': " + *refusal);
  }
  core::scoped_device on_device(caps.ordinal);
  switch (properties(strategy).path) {
    case data_path::copy:
      return recipes::make_copy_recipe(strategy, eng, io, caps.ordinal);
    case data_path::zero_copy:
      return recipes::make_zero_copy_recipe(strategy, eng, io, caps.ordinal);
    case data_path::migrate:
      return recipes::make_managed_recipe(strategy, eng, io, caps.ordinal);
    case data_path::resident:
      return recipes::make_device_recipe(eng, io, caps.ordinal);
  }
  throw invalid_argument("no recipe for strategy '" + std::string(to_string(strategy)) + "'");
}

}  // namespace ferry::bench
