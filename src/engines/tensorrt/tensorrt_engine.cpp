#include "engines/tensorrt/tensorrt_engine.hpp"

#include <algorithm>
#include <mutex>
#include <utility>

#include "core/scoped_device.hpp"
#include "engines/builtin/tensor_checks.hpp"
#include "engines/tensorrt/trt_context.hpp"
#include "engines/tensorrt/trt_model.hpp"
#include "engines/tensorrt/trt_shapes.hpp"
#include "ferry/core/error.hpp"

namespace ferry {
namespace {

using trt::input_request;

bool same_io(const std::vector<tensor_spec>& a, const std::vector<tensor_spec>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const tensor_spec& x, const tensor_spec& y) {
    return x.name == y.name && x.type == y.type && x.role == y.role && x.shape == y.shape;
  });
}

class tensorrt_engine final : public engine {
 public:
  explicit tensorrt_engine(std::shared_ptr<const trt::model> m) : model_(std::move(m)) {}

  [[nodiscard]] std::string_view name() const override { return model_->name(); }
  [[nodiscard]] const std::vector<tensor_spec>& io() const override { return model_->io().io; }

  [[nodiscard]] std::vector<tensor_spec> resolve(std::span<const shape_binding> inputs) const override {
    const trt::model_io& declared = model_->io();
    input_request request = trt::check_input_request(model_->name(), declared.inputs, declared.shape_inputs, inputs);
    const core::scoped_device on_device(model_->device());
    auto scratch = model_->create_context(nvinfer1::ExecutionContextAllocationStrategy::kUSER_MANAGED);
    trt::host_shape_memory memory;
    memory.apply(*scratch, *model_, request);
    std::vector<tensor_spec> io = trt::concrete_io(*scratch, *model_, request);
    remember(io, std::move(request.shape_values));
    return io;
  }

  [[nodiscard]] std::unique_ptr<engine_context> make_context(const std::vector<tensor_spec>& concrete_io) override {
    const trt::model_io& declared = model_->io();
    std::vector<shape_binding> bindings = builtin::input_shapes_of(concrete_io);
    if (!declared.shape_inputs.empty()) {
      auto values = remembered(concrete_io);
      if (!values)
        throw invalid_argument(model_->name() +
                               ": make_context got an I/O that resolve() did not return, so the "
                               "values of host shape tensor '" +
                               declared.shape_inputs.front().name + "' are unknown; pass resolve()'s result unchanged");
      bindings.insert(bindings.end(), values->begin(), values->end());
    }
    const input_request request =
        trt::check_input_request(model_->name(), declared.inputs, declared.shape_inputs, bindings);

    const core::scoped_device on_device(model_->device());
    auto context = model_->create_context(nvinfer1::ExecutionContextAllocationStrategy::kSTATIC);
    trt::host_shape_memory memory;
    memory.apply(*context, *model_, request);
    builtin::require_same_io(model_->name(), trt::concrete_io(*context, *model_, request), concrete_io);
    return std::make_unique<trt::trt_context>(model_, std::move(memory), std::move(context), concrete_io);
  }

 private:
  // The shape tensor values behind each concrete I/O resolve() returned, newest first: the
  // engine interface passes make_context() only the device I/O. Bounded; a bench run resolves a
  // handful of shapes.
  struct resolved_values {
    std::vector<tensor_spec> io;
    std::vector<shape_binding> shape_values;
  };
  static constexpr std::size_t remembered_limit = 64;

  void remember(const std::vector<tensor_spec>& io, std::vector<shape_binding> values) const {
    if (model_->io().shape_inputs.empty()) return;
    const std::lock_guard lock(resolved_mutex_);
    std::erase_if(resolved_, [&](const resolved_values& r) { return same_io(r.io, io); });
    resolved_.insert(resolved_.begin(), {io, std::move(values)});
    if (resolved_.size() > remembered_limit) resolved_.pop_back();
  }

  [[nodiscard]] std::optional<std::vector<shape_binding>> remembered(const std::vector<tensor_spec>& io) const {
    const std::lock_guard lock(resolved_mutex_);
    for (const auto& r : resolved_)
      if (same_io(r.io, io)) return r.shape_values;
    return std::nullopt;
  }

  std::shared_ptr<const trt::model> model_;
  mutable std::mutex resolved_mutex_;
  mutable std::vector<resolved_values> resolved_;
};

}  // namespace

std::unique_ptr<engine> load_tensorrt_engine(const std::string& path, const model_engine_options& options) {
  return std::make_unique<tensorrt_engine>(trt::model::load(path, options.device));
}

}  // namespace ferry
