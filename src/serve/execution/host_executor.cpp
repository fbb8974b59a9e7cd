#include "serve/execution/host_executor.hpp"

#include <chrono>
#include <cstdint>
#include <optional>

#include "serve/execution/batch_io.hpp"

namespace ferry::serve {
namespace {

std::uint64_t ns_since(std::chrono::steady_clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}

// A lone request's input read where it lies (the message or body it came in), when it is exactly
// the engine's input and aligned as the engine's own copy would be; none otherwise. A request's
// bytes in shared memory are always copied: the client may shrink its region under the read.
std::optional<std::span<const std::byte>> readable_in_place(std::span<const batch_item> batch, std::size_t index,
                                                            std::size_t engine_bytes) {
  if (batch.size() != 1) return std::nullopt;
  const input_tensor& in = batch.front().request->inputs.at(index);
  if (in.shared_memory || in.cuda_device || in.data.size() != engine_bytes ||
      reinterpret_cast<std::uintptr_t>(in.data.data()) % __STDCPP_DEFAULT_NEW_ALIGNMENT__ != 0)
    return std::nullopt;
  return in.data;
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

    // Engine-owned, aligned copies where the request's bytes cannot be read in place: several
    // requests' rows, or bytes at any offset of an HTTP body. (A copy doubles what a large
    // request holds while it runs.)
    std::vector<std::vector<std::byte>> input_bytes, output_bytes;
    std::vector<std::span<const std::byte>> in_views;
    std::vector<std::span<std::byte>> out_views;
    input_bytes.reserve(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (const auto in_place = readable_in_place(batch, i, inputs[i].bytes())) {
        in_views.push_back(*in_place);
        continue;
      }
      input_bytes.emplace_back(inputs[i].bytes());
      gather_input(batch, i, input_bytes.back(), gathered_for::host);
      in_views.emplace_back(input_bytes.back());
    }
    for (const auto& t : outputs) output_bytes.emplace_back(t.bytes());
    for (auto& b : output_bytes) out_views.emplace_back(b);
    timing.compute_input_ns = ns_since(start);

    start = std::chrono::steady_clock::now();
    engine_->run_on_host(in_views, out_views);
    timing.compute_infer_ns = ns_since(start);

    start = std::chrono::steady_clock::now();
    std::vector<std::span<const std::byte>> sources(output_bytes.begin(), output_bytes.end());
    // A lone request's response takes the engine's output buffers whole (no copy).
    scatter_outputs(batch, signature_, outputs, sources, output_bytes);
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
