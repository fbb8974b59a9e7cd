// mlp: the compute-bound workload, L layers of y = relu(x . W_k) on fp16 tensor cores through
// cuBLAS. Weights live on the host for the CPU reference and are uploaded once per device at the
// first make_context (so making the engine needs no GPU); each context owns its cuBLAS handle,
// workspace and two ping-pong activation buffers, so slots never share mutable state.
#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "core/device_memory.hpp"
#include "engines/builtin/cublas_handle.hpp"
#include "engines/builtin/host_reference.hpp"
#include "engines/builtin/host_views.hpp"
#include "engines/builtin/kernels.hpp"
#include "engines/builtin/launch_support.hpp"
#include "engines/builtin/mlp_weights.hpp"
#include "engines/builtin/tensor_checks.hpp"
#include "engines/builtin/workloads.hpp"
#include "ferry/core/error.hpp"

namespace ferry::builtin {
namespace {

// cuBLAS's recommended workspace on Hopper. Giving each handle its own (instead of the default
// pool) is what makes the GEMMs safe to capture into a CUDA graph and to run on concurrent slots.
constexpr std::size_t cublas_workspace_bytes = std::size_t{32} << 20;

class mlp_context final : public engine_context {
 public:
  mlp_context(std::string engine_name, std::vector<std::string> tensor_names, const __half* weights, int layers,
              int width, std::int64_t batch)
      : engine_context(std::move(engine_name), std::move(tensor_names)),
        weights_(weights),
        layers_(layers),
        width_(width),
        batch_(static_cast<int>(batch)),
        max_blocks_(grid_limit(ordinal())),
        workspace_(core::allocate_device(cublas_workspace_bytes)) {
    // Layer k writes activations_[k % 2] (the last layer writes the output): one buffer for two
    // layers, two from three on.
    const std::size_t bytes = activation_elements() * sizeof(__half);
    for (int i = 0; i < std::min(layers_ - 1, 2); ++i) activations_[i] = core::allocate_device(bytes);
  }

 private:
  // The addresses are read at launch.
  void do_bind(std::size_t, void*) override {}

  void do_enqueue(stream_ref stream) override {
    // cublasSetStream resets the handle to the default workspace pool, so the context's own
    // workspace is set again after it, every time. Both are host-side state changes only.
    FERRY_CUBLAS_TRY(cublasSetStream(handle_.get(), stream.get()));
    FERRY_CUBLAS_TRY(cublasSetWorkspace(handle_.get(), workspace_.get(), workspace_.size()));

    const auto* x = static_cast<const __half*>(device_addresses()[0]);
    auto* output = static_cast<__half*>(device_addresses()[1]);
    const auto w = static_cast<std::size_t>(width_);
    for (int layer = 0; layer < layers_; ++layer) {
      auto* y = layer == layers_ - 1 ? output : static_cast<__half*>(activations_[layer % 2].get());
      multiply(weights_ + static_cast<std::size_t>(layer) * w * w, x, y);
      launch_relu(y, activation_elements(), max_blocks_, stream.get());
      x = y;
    }
  }

  [[nodiscard]] std::size_t activation_elements() const {
    return static_cast<std::size_t>(batch_) * static_cast<std::size_t>(width_);
  }

  // Row-major Y[batch, W] = X[batch, W] . M[W, W] is, read column-major, Y^T = M^T X^T: a plain
  // no-transpose GEMM with m = W (output features), n = batch, k = W (input features).
  void multiply(const __half* matrix, const __half* x, __half* y) {
    const float alpha = 1.0F;
    const float beta = 0.0F;
    FERRY_CUBLAS_TRY(cublasGemmEx(handle_.get(), CUBLAS_OP_N, CUBLAS_OP_N, width_, batch_, width_, &alpha, matrix,
                                  CUDA_R_16F, width_, x, CUDA_R_16F, width_, &beta, y, CUDA_R_16F, width_,
                                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

  const __half* weights_;
  int layers_;
  int width_;
  int batch_;
  int max_blocks_;
  core::device_memory workspace_;
  core::device_memory activations_[2];
  cublas_handle handle_;  // last, so it is destroyed before the workspace it points at
};

class mlp_engine final : public host_reference_engine {
 public:
  mlp_engine(std::string name, int layers, int width, std::int64_t default_batch)
      : name_(std::move(name)),
        layers_(layers),
        width_(width),
        default_batch_(default_batch),
        io_{make_tensor("input", dtype::f16, {dynamic_dim, width}, tensor_role::input),
            make_tensor("output", dtype::f16, {dynamic_dim, width}, tensor_role::output)},
        host_weights_(make_mlp_weights(layers, width)) {}

  [[nodiscard]] std::string_view name() const override { return name_; }
  [[nodiscard]] const std::vector<tensor_spec>& io() const override { return io_; }

  [[nodiscard]] std::vector<tensor_spec> resolve(std::span<const shape_binding> inputs) const override {
    check_bindings(name_, io_, inputs);
    const shape_binding* input = find_binding(inputs, "input");
    const std::int64_t batch = input != nullptr ? input->dims[0] : default_batch_;
    if (batch > max_batch)
      throw invalid_argument(name_ + ": batch " + std::to_string(batch) + " exceeds " + std::to_string(max_batch));
    std::vector<tensor_spec> concrete = io_;
    for (auto& t : concrete) t.shape[0] = batch;
    return concrete;
  }

  [[nodiscard]] std::unique_ptr<engine_context> make_context(const std::vector<tensor_spec>& concrete_io) override {
    require_same_io(name_, resolve(input_shapes_of(concrete_io)), concrete_io);
    return std::make_unique<mlp_context>(name_, tensor_names(concrete_io), device_weights(), layers_, width_,
                                         concrete_io[0].shape[0]);
  }

  void run_on_host(std::span<const std::span<const std::byte>> inputs,
                   std::span<const std::span<std::byte>> outputs) const override {
    require_span_counts(name_, inputs.size(), 1, outputs.size(), 1);
    const std::size_t row_bytes = static_cast<std::size_t>(width_) * sizeof(__half);
    const std::size_t batch = inputs[0].size() / row_bytes;
    if (batch == 0 || inputs[0].size() % row_bytes != 0)
      throw invalid_argument(name_ + ": run_on_host got " + std::to_string(inputs[0].size()) +
                             " bytes for 'input', not a positive multiple of one row (" + std::to_string(row_bytes) +
                             " bytes)");
    const std::size_t elements = batch * static_cast<std::size_t>(width_);
    mlp_on_host(host_weights_, layers_, width_, typed_view<__half>(name_, "input", inputs[0], elements),
                typed_view<__half>(name_, "output", outputs[0], elements));
  }

  [[nodiscard]] double flops_per_request(std::span<const tensor_spec> concrete_io) const override {
    const double batch = concrete_io.empty() ? 0.0 : static_cast<double>(concrete_io[0].shape[0]);
    const double w = width_;
    return 2.0 * batch * w * w * layers_;
  }

 private:
  // cuBLAS takes m, n, k as int.
  static constexpr std::int64_t max_batch = INT32_MAX;

  // The weights on the current device, uploaded the first time a context is made there.
  // Contexts only read them, so one copy per device serves every slot.
  const __half* device_weights() {
    const int device = current_device();
    const std::lock_guard<std::mutex> lock(weights_mutex_);
    auto found = device_weights_.find(device);
    if (found == device_weights_.end()) {
      const std::size_t bytes = host_weights_.size() * sizeof(__half);
      core::device_memory copy = core::allocate_device(bytes);
      // Synchronous on purpose: this is set-up, not the request path.
      FERRY_CUDA_TRY(cudaMemcpy(copy.get(), host_weights_.data(), bytes, cudaMemcpyHostToDevice));
      found = device_weights_.emplace(device, std::move(copy)).first;
    }
    return static_cast<const __half*>(found->second.get());
  }

  std::string name_;
  int layers_;
  int width_;
  std::int64_t default_batch_;
  std::vector<tensor_spec> io_;
  std::vector<__half> host_weights_;
  std::mutex weights_mutex_;
  std::map<int, core::device_memory> device_weights_;
};

}  // namespace

std::unique_ptr<host_reference_engine> make_mlp_engine(std::string name, int layers, int width,
                                                       std::int64_t default_batch) {
  return std::make_unique<mlp_engine>(std::move(name), layers, width, default_batch);
}

}  // namespace ferry::builtin
