// sparse: embedding-style page lookups (see sparse_kernel.cu), as an engine. The caller writes
// fresh page indices every request; the engine only reads them, and validates them on the GPU.
#include <algorithm>
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

class sparse_engine final : public fixed_io_engine {
 public:
  sparse_engine(std::string name, std::size_t elements, std::int64_t rows)
      : fixed_io_engine(std::move(name),
                        {make_tensor("table", dtype::f32, {static_cast<std::int64_t>(elements)}, tensor_role::input),
                         // index_bound tells a benchmark which values to draw fresh each request.
                         make_tensor("indices", dtype::i32, {rows}, tensor_role::input,
                                     static_cast<std::int64_t>(elements / page_floats)),
                         make_tensor("rows", dtype::f32, {rows}, tensor_role::output)}),
        elements_(elements),
        rows_(rows) {}

  [[nodiscard]] std::unique_ptr<engine_context> make_context(const std::vector<tensor_spec>& concrete_io) override {
    check_concrete_io(concrete_io);
    const auto pages = static_cast<std::int64_t>(elements_ / page_floats);
    const std::int64_t rows = rows_;
    const int max_blocks = grid_limit(current_device());
    return std::make_unique<launch_context>(std::string(name()), tensor_names(concrete_io),
                                            [pages, rows, max_blocks](std::span<void* const> a, cudaStream_t stream) {
                                              launch_page_sums(static_cast<const float*>(a[0]), pages,
                                                               static_cast<const std::int32_t*>(a[1]), rows,
                                                               static_cast<float*>(a[2]), max_blocks, stream);
                                            });
  }

  void run_on_host(std::span<const std::span<const std::byte>> inputs,
                   std::span<const std::span<std::byte>> outputs) const override {
    check_span_counts(inputs.size(), outputs.size());
    const auto rows = static_cast<std::size_t>(rows_);
    page_sums_on_host(typed_view<float>(name(), "table", inputs[0], elements_),
                      typed_view<std::int32_t>(name(), "indices", inputs[1], rows),
                      typed_view<float>(name(), "rows", outputs[0], rows));
  }

  [[nodiscard]] double flops_per_request(std::span<const tensor_spec> /*concrete_io*/) const override {
    return static_cast<double>(rows_) * static_cast<double>(page_floats);
  }

  // One page of the table per row (at most: indices may repeat), the indices whole.
  [[nodiscard]] std::size_t input_bytes_read(const tensor_spec& input) const override {
    if (input.name != "table") return input.bytes();
    return std::min(input.bytes(), static_cast<std::size_t>(rows_) * page_floats * sizeof(float));
  }

 private:
  std::size_t elements_;
  std::int64_t rows_;
};

}  // namespace

std::unique_ptr<host_reference_engine> make_sparse_engine(std::string name, std::size_t elements, std::int64_t rows) {
  return std::make_unique<sparse_engine>(std::move(name), elements, rows);
}

}  // namespace ferry::builtin
