// Recipes: each strategy's request written as directly as the CUDA runtime allows, with no
// session, no slots, no events and one stream, to be timed beside the strategy in the same cell.
//
// A strategy's figure is credible only beside the same steps written by hand: the gap between
// the two is ferry's cost (sessions, slots, events, two streams, bookkeeping), not the platform's.
// Recipes share nothing with src/memory's buffers but the RAII owners of raw allocations, so a
// mistake in a strategy's buffer shows up as a gap instead of being copied into its yardstick.
//
// What each one does per request (after the CPU wrote the inputs; timed until the outputs are
// readable on the host):
//   pageable, pinned, registered: cudaMemcpyAsync of every input, the engine, cudaMemcpyAsync of
//     every output, cudaStreamSynchronize
//   staged: memcpy into pinned staging, then as above, then memcpy out of staging
//   mapped, registered-mapped, system: the engine reads and writes host memory; synchronize
//   managed: the engine; synchronize
//   managed-prefetch: cudaMemPrefetchAsync of every input to the GPU, the engine (outputs live in
//     host pages: preferred location host, accessed by the GPU); synchronize
//   managed-advise: the engine on host-preferred pages; synchronize
//   device: the engine on inputs copied to the GPU beforehand, untimed (the floor)
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "ferry/core/stream.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/engines/engine.hpp"
#include "ferry/memory/strategy.hpp"

namespace ferry::bench {

class recipe {
 public:
  virtual ~recipe() = default;
  recipe(const recipe&) = delete;
  recipe& operator=(const recipe&) = delete;

  // The steps in words, for reports.
  [[nodiscard]] virtual std::string_view steps() const noexcept = 0;
  [[nodiscard]] strategy_kind strategy() const noexcept { return strategy_; }

  [[nodiscard]] std::size_t input_count() const noexcept { return inputs_.size(); }
  [[nodiscard]] std::size_t output_count() const noexcept { return outputs_.size(); }
  [[nodiscard]] const tensor_spec& input_spec(std::size_t i) const { return inputs_.at(i).spec; }
  [[nodiscard]] const tensor_spec& output_spec(std::size_t i) const { return outputs_.at(i).spec; }
  // Where the CPU writes input i before a request, and reads output i after one.
  [[nodiscard]] std::span<std::byte> input(std::size_t i) { return inputs_.at(i).host; }
  [[nodiscard]] std::span<const std::byte> output(std::size_t i) const { return outputs_.at(i).host; }

  // After the CPU wrote the inputs and outside the timing: the device recipe copies them to the
  // GPU (its inputs are resident by definition). Nothing for the others.
  virtual void stage_inputs_untimed() {}
  // One request: the inputs reach the engine, the engine runs, the outputs reach the host.
  // Returns when the outputs are readable on the host.
  virtual void run_blocking() = 0;
  // Outside the timing: the device recipe copies its outputs back for a check. Nothing for the
  // others, whose outputs are on the host after run_blocking().
  virtual void fetch_outputs_untimed() {}
  // Whether the CPU reads the outputs after a request (every recipe but the device floor).
  [[nodiscard]] bool outputs_on_host() const noexcept { return strategy_ != strategy_kind::device; }

 protected:
  struct tensor {
    tensor_spec spec;
    std::span<std::byte> host;  // what the CPU writes or reads
    void* device = nullptr;     // what the engine is bound to
  };
  recipe(strategy_kind strategy, int device) : strategy_(strategy), device_(device) {}
  // Binds every tensor and makes the engine's context; called once the tensors are in place.
  void bind(engine& eng, const std::vector<tensor_spec>& io);

  strategy_kind strategy_;
  int device_;
  std::vector<tensor> inputs_;
  std::vector<tensor> outputs_;
  std::unique_ptr<engine_context> context_;
  stream stream_;
};

// The recipe of `strategy` for `eng` with concrete `io`, on the GPU of `caps` (made current while
// it is built; run it with that GPU current). Throws unsupported where the strategy is refused
// on this platform or a managed request does not fit (with `managed_policy`), as the strategy's
// own buffers would.
[[nodiscard]] std::unique_ptr<recipe> make_recipe(strategy_kind strategy, engine& eng,
                                                  const std::vector<tensor_spec>& io, const device_caps& caps,
                                                  oversubscription managed_policy);

}  // namespace ferry::bench
