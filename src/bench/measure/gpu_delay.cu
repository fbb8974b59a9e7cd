#include "bench/measure/gpu_delay.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/median.hpp"
#include "ferry/core/error.hpp"

namespace ferry::bench {
namespace {

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void spin_for(std::uint64_t began, std::int64_t wait) {
  if (wait <= 0) return;
  while (global_ns() - began < static_cast<std::uint64_t>(wait)) {
  }
}

// One thread spins until the GPU's global timer has advanced by the length the host wrote last.
__global__ void spin_kernel(const volatile std::int64_t* nanoseconds) {
  const std::uint64_t began = global_ns();
  spin_for(began, *nanoseconds);
}

// The same spin with its length given at launch, for measuring the kernel's own cost.
__global__ void spin_kernel_for(std::int64_t nanoseconds) { spin_for(global_ns(), nanoseconds); }

// What the spin kernel appended after other work costs that work's span when it does not spin, in
// µs: the median difference between [20 µs spin] and [20 µs spin, spin_kernel reading `zero`]
// timed by events, interleaved, so the appended kernel is queued behind running work as it is
// behind an engine's and reads its length from host memory as it does there (that read crosses
// the link: part of the cost).
double appended_kernel_us(const volatile std::int64_t* zero) {
  const stream s;
  event began(event_timing::enabled);
  event ended(event_timing::enabled);
  const auto span_ms = [&](int appended) {
    began.record(s);
    spin_kernel_for<<<1, 1, 0, s.get()>>>(20'000);
    for (int i = 0; i < appended; ++i) spin_kernel<<<1, 1, 0, s.get()>>>(zero);
    FERRY_CUDA_CHECK_LAUNCH();
    ended.record(s);
    ended.synchronize_blocking();
    return static_cast<double>(elapsed_ms(began, ended));
  };
  std::vector<double> alone;
  std::vector<double> with_one;
  span_ms(1);  // the first launch loads the kernels
  for (int i = 0; i < 31; ++i) {
    alone.push_back(span_ms(0));
    with_one.push_back(span_ms(1));
  }
  return std::max(0.0, (core::median(with_one) - core::median(alone)) * 1e3);
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
  // The length stays 0 (no spin) until the first span is observed; the kernel costs this even so.
  kernel_cost_us_ = appended_kernel_us(nanoseconds_);
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
  const double undelayed = gpu_span_us - (static_cast<double>(*nanoseconds_) * 1e-3 + kernel_cost_us_);
  if (!(undelayed > 0)) return;
  // The median of the last spans: one slow request, or a first one that found the GPU cold, moves
  // the delay little (an average seeded by the first span drifted to +7% or +10% of a 10% asked).
  recent_[observed_++ % recent_.size()] = undelayed;
  undelayed_us_ = core::median(std::span<const double>(recent_.data(), std::min(observed_, recent_.size())));
  // The kernel's own cost is part of the delay: it spins for the rest.
  *nanoseconds_ = static_cast<std::int64_t>(std::max(0.0, fraction_ * undelayed_us_ - kernel_cost_us_) * 1e3);
}

double gpu_delay::delay_us() const {
  std::lock_guard lock(mutex_);
  return static_cast<double>(*nanoseconds_) * 1e-3 + kernel_cost_us_;
}

std::string gpu_delay::floor_note() const {
  std::lock_guard lock(mutex_);
  if (undelayed_us_ <= 0 || fraction_ * undelayed_us_ >= kernel_cost_us_) return {};
  // snprintf, not fmt: fmt's headers do not compile under nvcc.
  std::array<char, 256> text{};
  std::snprintf(text.data(), text.size(),
                "the spin kernel's own cost (%.1f µs) is more than %g%% of this cell's GPU time (%.1f µs): its "
                "requests were slowed by %.0f%% on the GPU, not by the fraction asked",
                kernel_cost_us_, 100 * fraction_, undelayed_us_, 100 * kernel_cost_us_ / undelayed_us_);
  return text.data();
}

std::unique_ptr<engine> delayed(engine& inner, gpu_delay& delay) {
  return std::make_unique<delayed_engine>(inner, nullptr, delay);
}

std::unique_ptr<engine> delayed(std::unique_ptr<engine> inner, gpu_delay& delay) {
  engine& e = *inner;
  return std::make_unique<delayed_engine>(e, std::move(inner), delay);
}

}  // namespace ferry::bench
