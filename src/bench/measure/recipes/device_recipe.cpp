// device by hand, the floor: the engine alone on device-resident inputs, copied to the GPU after
// the CPU wrote them and outside the timing; one synchronize.
#include "bench/measure/recipes/recipe_kinds.hpp"
#include "core/device_memory.hpp"
#include "core/pinned_memory.hpp"
#include "ferry/core/error.hpp"

namespace ferry::bench::recipes {
namespace {

class device_recipe final : public recipe {
 public:
  device_recipe(engine& eng, const std::vector<tensor_spec>& io, int device) : recipe(strategy_kind::device, device) {
    for (const auto& spec : io) {
      owned& o = owned_.emplace_back(
          owned{core::allocate_pinned(spec.bytes(), cudaHostAllocPortable), core::allocate_device(spec.bytes())});
      (spec.role == tensor_role::input ? inputs_ : outputs_).push_back({spec, o.shadow.span(), o.device.get()});
    }
    bind(eng, io);
  }

  [[nodiscard]] std::string_view steps() const noexcept override {
    return "engine on inputs already in device memory, synchronize";
  }

  void stage_inputs_untimed() override {
    for (const tensor& t : inputs_)
      FERRY_CUDA_TRY(cudaMemcpyAsync(t.device, t.host.data(), t.host.size(), cudaMemcpyHostToDevice, stream_.get()));
    FERRY_CUDA_TRY(cudaStreamSynchronize(stream_.get()));
  }

  void run_blocking() override {
    context_->enqueue(stream_);
    FERRY_CUDA_TRY(cudaStreamSynchronize(stream_.get()));
  }

  void fetch_outputs_untimed() override {
    for (const tensor& t : outputs_)
      FERRY_CUDA_TRY(cudaMemcpyAsync(t.host.data(), t.device, t.host.size(), cudaMemcpyDeviceToHost, stream_.get()));
    FERRY_CUDA_TRY(cudaStreamSynchronize(stream_.get()));
  }

 private:
  struct owned {
    core::pinned_memory shadow;  // where the CPU writes inputs and a check reads outputs
    core::device_memory device;
  };
  std::vector<owned> owned_;
};

}  // namespace

std::unique_ptr<recipe> make_device_recipe(engine& eng, const std::vector<tensor_spec>& io, int device) {
  return std::make_unique<device_recipe>(eng, io, device);
}

}  // namespace ferry::bench::recipes
