// managed, managed-prefetch and managed-advise by hand: one cudaMallocManaged allocation per
// tensor, steered with the runtime's own calls.
#include "bench/measure/recipes/recipe_kinds.hpp"
#include "core/managed_memory.hpp"
#include "ferry/core/error.hpp"

namespace ferry::bench::recipes {
namespace {

cudaMemLocation on_device(int ordinal) {
  cudaMemLocation l{};
  l.type = cudaMemLocationTypeDevice;
  l.id = ordinal;
  return l;
}

cudaMemLocation on_host() {
  cudaMemLocation l{};
  l.type = cudaMemLocationTypeHost;
  return l;
}

class managed_recipe final : public recipe {
 public:
  managed_recipe(strategy_kind strategy, engine& eng, const std::vector<tensor_spec>& io, int device)
      : recipe(strategy, device) {
    for (const auto& spec : io) {
      core::managed_memory& m = owned_.emplace_back(core::allocate_managed(spec.bytes()));
      // managed-advise keeps every tensor in host pages the GPU reads over the link; managed-prefetch
      // keeps its outputs so (the GPU writes them where the CPU will read them).
      const bool host_resident = strategy == strategy_kind::managed_advise ||
                                 (strategy == strategy_kind::managed_prefetch && spec.role == tensor_role::output);
      if (host_resident) {
        FERRY_CUDA_TRY(cudaMemAdvise(m.get(), m.size(), cudaMemAdviseSetPreferredLocation, on_host()));
        FERRY_CUDA_TRY(cudaMemAdvise(m.get(), m.size(), cudaMemAdviseSetAccessedBy, on_device(device)));
      }
      (spec.role == tensor_role::input ? inputs_ : outputs_).push_back({spec, m.span(), m.get()});
    }
    bind(eng, io);
  }

  [[nodiscard]] std::string_view steps() const noexcept override {
    switch (strategy_) {
      case strategy_kind::managed_prefetch:
        return "cudaMemPrefetchAsync of the inputs to the GPU, engine (outputs in host-preferred pages), synchronize";
      case strategy_kind::managed_advise:
        return "engine on host-preferred pages accessed by the GPU, synchronize";
      default:
        return "engine on managed pages, migrated on fault, synchronize";
    }
  }

  void run_blocking() override {
    if (strategy_ == strategy_kind::managed_prefetch)
      for (const tensor& t : inputs_)
        FERRY_CUDA_TRY(cudaMemPrefetchAsync(t.device, t.host.size(), on_device(device_), 0, stream_.get()));
    context_->enqueue(stream_);
    FERRY_CUDA_TRY(cudaStreamSynchronize(stream_.get()));
  }

 private:
  std::vector<core::managed_memory> owned_;
};

}  // namespace

std::unique_ptr<recipe> make_managed_recipe(strategy_kind strategy, engine& eng, const std::vector<tensor_spec>& io,
                                            int device) {
  return std::make_unique<managed_recipe>(strategy, eng, io, device);
}

}  // namespace ferry::bench::recipes
