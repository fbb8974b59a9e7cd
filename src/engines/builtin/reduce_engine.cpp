// reduce: a large input folded into reduce_buckets sums (see reduce_kernel.cu), as an engine.
#include <string>
#include <utility>

#include "engines/builtin/fixed_io_engine.hpp"
#include "engines/builtin/host_reference.hpp"
#include "engines/builtin/host_views.hpp"
#include "engines/builtin/kernels.hpp"
#include "engines/builtin/launch_context.hpp"
#include "engines/builtin/tensor_checks.hpp"
#include "engines/builtin/workloads.hpp"

namespace ferry::builtin {
namespace {

class reduce_engine final : public fixed_io_engine {
 public:
  reduce_engine(std::size_t elements, int passes)
      : fixed_io_engine(passes == 1 ? "reduce" : "reduce:" + std::to_string(passes),
                        {make_tensor("input", dtype::f32, {static_cast<std::int64_t>(elements)}, tensor_role::input),
                         make_tensor("sums", dtype::f32, {reduce_buckets}, tensor_role::output)}),
        elements_(elements),
        passes_(passes) {}

  [[nodiscard]] std::unique_ptr<engine_context> make_context(const std::vector<tensor_spec>& concrete_io) override {
    check_concrete_io(concrete_io);
    const std::size_t n = elements_;
    const int passes = passes_;
    return std::make_unique<launch_context>(
        std::string(name()), tensor_names(concrete_io), [n, passes](std::span<void* const> a, cudaStream_t stream) {
          launch_chunk_sums(static_cast<const float*>(a[0]), n, static_cast<float*>(a[1]), stream, passes);
        });
  }

  void run_on_host(std::span<const std::span<const std::byte>> inputs,
                   std::span<const std::span<std::byte>> outputs) const override {
    check_span_counts(inputs.size(), outputs.size());
    chunk_sums_on_host(typed_view<float>(name(), "input", inputs[0], elements_),
                       typed_view<float>(name(), "sums", outputs[0], reduce_buckets));
  }

  [[nodiscard]] double flops_per_request(std::span<const tensor_spec> /*concrete_io*/) const override {
    return static_cast<double>(elements_) * passes_;  // one add per element and pass
  }

 private:
  std::size_t elements_;
  int passes_;
};

}  // namespace

std::unique_ptr<host_reference_engine> make_reduce_engine(std::size_t elements, int passes) {
  return std::make_unique<reduce_engine>(elements, passes);
}

}  // namespace ferry::builtin
