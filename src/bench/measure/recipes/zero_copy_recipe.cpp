// mapped, registered-mapped and system by hand: the engine is bound to host memory and reads and
// writes it over the link while it runs; one synchronize.
#include "bench/measure/recipes/recipe_kinds.hpp"
#include "core/host_registration.hpp"
#include "core/pageable_memory.hpp"
#include "core/pinned_memory.hpp"
#include "ferry/core/error.hpp"

namespace ferry::bench::recipes {
namespace {

class zero_copy_recipe final : public recipe {
 public:
  zero_copy_recipe(strategy_kind strategy, engine& eng, const std::vector<tensor_spec>& io, int device)
      : recipe(strategy, device) {
    for (const auto& spec : io) {
      const std::size_t n = spec.bytes();
      tensor t{spec, {}, nullptr};
      owned& o = owned_.emplace_back();
      if (strategy == strategy_kind::mapped) {
        o.pinned = core::allocate_pinned(n, cudaHostAllocMapped | cudaHostAllocPortable);
        t.host = o.pinned.span();
        FERRY_CUDA_TRY(cudaHostGetDevicePointer(&t.device, o.pinned.get(), 0));
      } else {
        o.pageable = core::allocate_pageable(n);
        t.host = o.pageable.span();
        if (strategy == strategy_kind::registered_mapped) {
          o.registration = core::register_host(t.host, cudaHostRegisterMapped | cudaHostRegisterPortable);
          FERRY_CUDA_TRY(cudaHostGetDevicePointer(&t.device, t.host.data(), 0));
        } else {  // system: the device reads pageable memory through HMM/ATS
          t.device = t.host.data();
        }
      }
      (spec.role == tensor_role::input ? inputs_ : outputs_).push_back(t);
    }
    bind(eng, io);
  }

  [[nodiscard]] std::string_view steps() const noexcept override {
    return "engine on host memory read and written in place, synchronize";
  }

  void run_blocking() override {
    context_->enqueue(stream_);
    FERRY_CUDA_TRY(cudaStreamSynchronize(stream_.get()));
  }

 private:
  struct owned {
    core::pageable_memory pageable;
    core::pinned_memory pinned;
    core::host_registration registration;
  };
  std::vector<owned> owned_;
};

}  // namespace

std::unique_ptr<recipe> make_zero_copy_recipe(strategy_kind strategy, engine& eng, const std::vector<tensor_spec>& io,
                                              int device) {
  return std::make_unique<zero_copy_recipe>(strategy, eng, io, device);
}

}  // namespace ferry::bench::recipes
