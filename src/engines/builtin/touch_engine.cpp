// touch: the memory-bound workload (see touch_kernel.cu), as an engine.
#include <utility>

#include "engines/builtin/fixed_io_engine.hpp"
#include "engines/builtin/host_reference.hpp"
#include "engines/builtin/host_views.hpp"
#include "engines/builtin/kernels.hpp"
#include "engines/builtin/launch_context.hpp"
#include "engines/builtin/launch_support.hpp"
#include "engines/builtin/tensor_checks.hpp"
#include "engines/builtin/workloads.hpp"

namespace ferry::builtin {
namespace {

class touch_engine final : public fixed_io_engine {
 public:
  explicit touch_engine(std::size_t elements)
      : fixed_io_engine(
            "touch", {make_tensor("input", dtype::f32, {static_cast<std::int64_t>(elements)}, tensor_role::input),
                      make_tensor("output", dtype::f32, {static_cast<std::int64_t>(elements)}, tensor_role::output)}),
        elements_(elements) {}

  [[nodiscard]] std::unique_ptr<engine_context> make_context(const std::vector<tensor_spec>& concrete_io) override {
    check_concrete_io(concrete_io);
    const std::size_t n = elements_;
    const int max_blocks = grid_limit(current_device());
    return std::make_unique<launch_context>(
        std::string(name()), tensor_names(concrete_io), [n, max_blocks](std::span<void* const> a, cudaStream_t stream) {
          launch_touch(static_cast<const float*>(a[0]), static_cast<float*>(a[1]), n, max_blocks, stream);
        });
  }

  void run_on_host(std::span<const std::span<const std::byte>> inputs,
                   std::span<const std::span<std::byte>> outputs) const override {
    check_span_counts(inputs.size(), outputs.size());
    touch_on_host(typed_view<float>(name(), "input", inputs[0], elements_),
                  typed_view<float>(name(), "output", outputs[0], elements_));
  }

  [[nodiscard]] double flops_per_request(std::span<const tensor_spec> /*concrete_io*/) const override {
    return 2.0 * static_cast<double>(elements_);  // one multiply-add per element
  }

 private:
  std::size_t elements_;
};

}  // namespace

std::unique_ptr<host_reference_engine> make_touch_engine(std::size_t elements) {
  return std::make_unique<touch_engine>(elements);
}

}  // namespace ferry::builtin
