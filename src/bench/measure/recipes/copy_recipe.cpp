// pageable, pinned, registered and staged by hand: cudaMemcpyAsync in, the engine, cudaMemcpyAsync
// out, on one stream, then one synchronize.
#include <cstring>

#include "bench/measure/recipes/recipe_kinds.hpp"
#include "core/device_memory.hpp"
#include "core/host_registration.hpp"
#include "core/pageable_memory.hpp"
#include "core/pinned_memory.hpp"
#include "ferry/core/error.hpp"

namespace ferry::bench::recipes {
namespace {

class copy_recipe final : public recipe {
 public:
  copy_recipe(strategy_kind strategy, engine& eng, const std::vector<tensor_spec>& io, int device)
      : recipe(strategy, device) {
    for (const auto& spec : io) {
      const std::size_t n = spec.bytes();
      tensor t{spec, {}, nullptr};
      owned& o = owned_.emplace_back();
      switch (strategy) {
        case strategy_kind::pinned:
          o.pinned = core::allocate_pinned(n, cudaHostAllocPortable);
          t.host = o.pinned.span();
          break;
        case strategy_kind::staged:
          o.pageable = core::allocate_pageable(n);
          o.pinned = core::allocate_pinned(n, cudaHostAllocPortable);  // the staging buffer
          t.host = o.pageable.span();
          break;
        case strategy_kind::registered:
          o.pageable = core::allocate_pageable(n);
          o.registration = core::register_host(o.pageable.span(), cudaHostRegisterPortable);
          t.host = o.pageable.span();
          break;
        default:  // pageable
          o.pageable = core::allocate_pageable(n);
          t.host = o.pageable.span();
          break;
      }
      o.device = core::allocate_device(n);
      t.device = o.device.get();
      (spec.role == tensor_role::input ? inputs_ : outputs_).push_back(t);
      (spec.role == tensor_role::input ? input_staging_ : output_staging_).push_back(o.pinned.get());
    }
    bind(eng, io);
  }

  [[nodiscard]] std::string_view steps() const noexcept override {
    return strategy_ == strategy_kind::staged
               ? "memcpy into pinned staging, cudaMemcpyAsync in, engine, cudaMemcpyAsync out, synchronize, "
                 "memcpy out of staging"
               : "cudaMemcpyAsync in, engine, cudaMemcpyAsync out, synchronize";
  }

  void run_blocking() override {
    const bool staged = strategy_ == strategy_kind::staged;
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
      const tensor& t = inputs_[i];
      const void* source = t.host.data();
      if (staged) {
        std::memcpy(input_staging_[i], t.host.data(), t.host.size());
        source = input_staging_[i];
      }
      FERRY_CUDA_TRY(cudaMemcpyAsync(t.device, source, t.host.size(), cudaMemcpyHostToDevice, stream_.get()));
    }
    context_->enqueue(stream_);
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
      const tensor& t = outputs_[i];
      void* destination = staged ? output_staging_[i] : static_cast<void*>(t.host.data());
      FERRY_CUDA_TRY(cudaMemcpyAsync(destination, t.device, t.host.size(), cudaMemcpyDeviceToHost, stream_.get()));
    }
    FERRY_CUDA_TRY(cudaStreamSynchronize(stream_.get()));
    if (staged)
      for (std::size_t i = 0; i < outputs_.size(); ++i)
        std::memcpy(outputs_[i].host.data(), output_staging_[i], outputs_[i].host.size());
  }

 private:
  struct owned {
    core::pageable_memory pageable;
    core::pinned_memory pinned;
    core::host_registration registration;  // released before the memory it registers
    core::device_memory device;
  };
  // Declared after the base's tensors; registrations are released first (member order reversed
  // within owned: device, registration, pinned, pageable).
  std::vector<owned> owned_;
  std::vector<void*> input_staging_, output_staging_;
};

}  // namespace

std::unique_ptr<recipe> make_copy_recipe(strategy_kind strategy, engine& eng, const std::vector<tensor_spec>& io,
                                         int device) {
  return std::make_unique<copy_recipe>(strategy, eng, io, device);
}

}  // namespace ferry::bench::recipes
