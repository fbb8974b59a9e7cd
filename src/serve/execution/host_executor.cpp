#include "serve/execution/host_executor.hpp"

#include <chrono>

#include "serve/execution/batch_io.hpp"

namespace ferry::serve {
namespace {

std::uint64_t ns_since(std::chrono::steady_clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}

class host_executor final : public executor {
 public:
  host_executor(std::unique_ptr<host_reference_engine> engine, model_signature signature, int workers)
      : engine_(std::move(engine)), signature_(std::move(signature)), workers_(workers) {}

  [[nodiscard]] const std::vector<tensor_spec>& io() const override { return engine_->io(); }
  [[nodiscard]] int workers() const override { return workers_; }
  [[nodiscard]] std::string platform() const override { return "ferry_cpu_reference"; }

  batch_timing execute(std::span<batch_item> batch, int /*worker*/) override {
    batch_timing timing;
    auto start = std::chrono::steady_clock::now();
    const std::int64_t rows = total_rows(batch);
    const auto shapes = batch_shapes(batch, signature_, rows);
    std::vector<tensor_spec> inputs, outputs;
    for (auto& t : engine_->resolve(shapes)) (t.role == tensor_role::input ? inputs : outputs).push_back(std::move(t));

    // Engine-owned, aligned copies: request bytes can sit at any offset of an HTTP body.
    std::vector<std::vector<std::byte>> input_bytes, output_bytes;
    std::vector<std::span<const std::byte>> in_views;
    std::vector<std::span<std::byte>> out_views;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      input_bytes.emplace_back(inputs[i].bytes());
      gather_input(batch, i, input_bytes.back(), gathered_for::host);
    }
    for (const auto& b : input_bytes) in_views.emplace_back(b);
    for (const auto& t : outputs) output_bytes.emplace_back(t.bytes());
    for (auto& b : output_bytes) out_views.emplace_back(b);
    timing.compute_input_ns = ns_since(start);

    start = std::chrono::steady_clock::now();
    engine_->run_on_host(in_views, out_views);
    timing.compute_infer_ns = ns_since(start);

    start = std::chrono::steady_clock::now();
    std::vector<std::span<const std::byte>> sources(output_bytes.begin(), output_bytes.end());
    scatter_outputs(batch, signature_, outputs, sources);
    timing.compute_output_ns = ns_since(start);
    return timing;
  }

 private:
  std::unique_ptr<host_reference_engine> engine_;
  model_signature signature_;
  int workers_;
};

}  // namespace

std::unique_ptr<executor> make_host_executor(std::unique_ptr<host_reference_engine> engine, model_signature signature,
                                             int workers) {
  return std::make_unique<host_executor>(std::move(engine), std::move(signature), workers);
}

}  // namespace ferry::serve
