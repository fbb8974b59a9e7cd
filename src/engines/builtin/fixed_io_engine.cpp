#include "engines/builtin/fixed_io_engine.hpp"

#include <utility>

#include "engines/builtin/host_views.hpp"
#include "engines/builtin/tensor_checks.hpp"

namespace ferry::builtin {

fixed_io_engine::fixed_io_engine(std::string name, std::vector<tensor_spec> io)
    : name_(std::move(name)), io_(std::move(io)) {}

std::vector<tensor_spec> fixed_io_engine::resolve(std::span<const shape_binding> inputs) const {
  check_bindings(name_, io_, inputs);
  return io_;
}

void fixed_io_engine::check_concrete_io(const std::vector<tensor_spec>& concrete_io) const {
  require_same_io(name_, io_, concrete_io);
}

void fixed_io_engine::check_span_counts(std::size_t inputs, std::size_t outputs) const {
  std::size_t declared_inputs = 0;
  for (const auto& t : io_) declared_inputs += t.role == tensor_role::input ? 1 : 0;
  require_span_counts(name_, inputs, declared_inputs, outputs, io_.size() - declared_inputs);
}

}  // namespace ferry::builtin
