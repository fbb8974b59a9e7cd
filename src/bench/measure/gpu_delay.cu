#include "bench/measure/gpu_delay.hpp"

#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "ferry/core/error.hpp"

namespace ferry::bench {
namespace {

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One thread spins until the GPU's global timer has advanced by the length the host wrote last.
__global__ void spin_kernel(const volatile std::int64_t* nanoseconds) {
  const std::uint64_t began = global_ns();
  const std::int64_t wait = *nanoseconds;
  if (wait <= 0) return;
  while (global_ns() - began < static_cast<std::uint64_t>(wait)) {
  }
}

class delayed_context final : public engine_context {
 public:
  delayed_context(std::unique_ptr<engine_context> inner, const gpu_delay& delay, const std::vector<tensor_spec>& io)
      : engine_context("delayed", tensor_names(io)), inner_(std::move(inner)), delay_(delay) {}

 private:
  void do_bind(std::size_t index, void* device_address) override { inner_->bind(tensor_name(index), device_address); }
  void do_enqueue(stream_ref stream) override {
    inner_->enqueue(stream);
    delay_.enqueue(stream);
  }
  bool do_signal_inputs_consumed(cudaEvent_t consumed) override { return inner_->signal_inputs_consumed(consumed); }
  std::optional<std::string> do_capture_refusal() const override { return inner_->capture_refusal(); }
  std::optional<std::string> do_use_own_graphs(int max_graphs) override { return inner_->use_own_graphs(max_graphs); }
  std::optional<std::string> do_own_graphs_failure() const override { return inner_->own_graphs_failure(); }

  std::unique_ptr<engine_context> inner_;
  const gpu_delay& delay_;
};

class delayed_engine final : public engine {
 public:
  delayed_engine(engine& inner, std::unique_ptr<engine> owned, gpu_delay& delay)
      : inner_(inner), owned_(std::move(owned)), delay_(delay) {}

  std::string_view name() const override { return inner_.name(); }
  const std::vector<tensor_spec>& io() const override { return inner_.io(); }
  std::vector<tensor_spec> resolve(std::span<const shape_binding> inputs) const override {
    return inner_.resolve(inputs);
  }
  std::unique_ptr<engine_context> make_context(const std::vector<tensor_spec>& concrete_io) override {
    return std::make_unique<delayed_context>(inner_.make_context(concrete_io), delay_, concrete_io);
  }
  std::size_t input_bytes_read(const tensor_spec& input) const override { return inner_.input_bytes_read(input); }

 private:
  engine& inner_;
  std::unique_ptr<engine> owned_;  // null where the caller owns inner_
  gpu_delay& delay_;
};

}  // namespace

gpu_delay::gpu_delay(double fraction) : fraction_(fraction) {
  void* p = nullptr;
  // Portable: a multi-GPU cell's kernels on every GPU read it (through unified addressing).
  FERRY_CUDA_TRY(cudaHostAlloc(&p, sizeof(std::int64_t), cudaHostAllocMapped | cudaHostAllocPortable));
  nanoseconds_ = static_cast<volatile std::int64_t*>(p);
  *nanoseconds_ = 0;
}

gpu_delay::~gpu_delay() {
  // The last kernels read it: they are done once the cell's sessions are gone, which own the streams.
  FERRY_CUDA_TRY_NOTHROW(cudaFreeHost(const_cast<std::int64_t*>(nanoseconds_)));
}

void gpu_delay::enqueue(stream_ref stream) const {
  spin_kernel<<<1, 1, 0, stream.get()>>>(nanoseconds_);
  FERRY_CUDA_CHECK_LAUNCH();
}

void gpu_delay::observe(double gpu_span_us) {
  std::lock_guard lock(mutex_);
  // The delay in this span is (about) the one set now: the length changes slowly.
  const double undelayed = gpu_span_us - static_cast<double>(*nanoseconds_) * 1e-3;
  if (!(undelayed > 0)) return;
  // An average over the last ~16 requests: one slow request moves the delay little.
  undelayed_us_ = undelayed_us_ == 0 ? undelayed : undelayed_us_ + (undelayed - undelayed_us_) / 16;
  *nanoseconds_ = static_cast<std::int64_t>(fraction_ * undelayed_us_ * 1e3);
}

double gpu_delay::delay_us() const {
  std::lock_guard lock(mutex_);
  return static_cast<double>(*nanoseconds_) * 1e-3;
}

std::unique_ptr<engine> delayed(engine& inner, gpu_delay& delay) {
  return std::make_unique<delayed_engine>(inner, nullptr, delay);
}

std::unique_ptr<engine> delayed(std::unique_ptr<engine> inner, gpu_delay& delay) {
  engine& e = *inner;
  return std::make_unique<delayed_engine>(e, std::move(inner), delay);
}

}  // namespace ferry::bench
