#include "ferry/engines/builtin.hpp"

namespace ferry {

// Unknown by default: an engine that cannot count its work says 0 rather than guess.
double host_reference_engine::flops_per_request(std::span<const tensor_spec> /*concrete_io*/) const { return 0.0; }

}  // namespace ferry
