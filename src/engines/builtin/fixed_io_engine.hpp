// Base of the built-in workloads whose I/O is fully concrete at construction (touch, reduce,
// sparse): resolve() only checks the given shapes, and make_context() only checks it got
// resolve()'s result back.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "ferry/engines/builtin.hpp"

namespace ferry::builtin {

class fixed_io_engine : public host_reference_engine {
 public:
  fixed_io_engine(std::string name, std::vector<tensor_spec> io);

  [[nodiscard]] std::string_view name() const override { return name_; }
  [[nodiscard]] const std::vector<tensor_spec>& io() const override { return io_; }
  [[nodiscard]] std::vector<tensor_spec> resolve(std::span<const shape_binding> inputs) const override;

 protected:
  // Throws invalid_argument unless concrete_io is this engine's I/O.
  void check_concrete_io(const std::vector<tensor_spec>& concrete_io) const;
  // Throws invalid_argument unless run_on_host got one span per input and per output.
  void check_span_counts(std::size_t inputs, std::size_t outputs) const;

 private:
  std::string name_;
  std::vector<tensor_spec> io_;
};

}  // namespace ferry::builtin
