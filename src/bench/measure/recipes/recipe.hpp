// Recipes: each strategy's request written as directly as the CUDA runtime allows, with no
// session, no slots, no events and one stream, to be timed beside the strategy in the same cell.
//
// A strategy's figure is credible only beside the same steps written by hand: the gap between
// the two is ferry's cost (sessions, slots, events, two streams, bookkeeping), not the platform's.
// A recipe is the strategy's own tensors by hand (its registered type's by_hand_tensor, in
// src/memory/strategies/<name>/ or the families of src/memory/by_hand/), which share nothing with
// its buffers but core's RAII owners of raw allocations, so a mistake in a strategy's buffer shows
// up as a gap instead of being copied into its yardstick. Every recipe runs the same loop, so a
// strategy registered in its folder has its recipe with nothing added here.
//
// One request (after the CPU wrote the inputs; timed until the outputs are readable on the host):
// each input's steps before the engine (a copy, a staging memcpy and a copy, a prefetch, or none),
// the engine, each output's steps after it (a copy, or none), one cudaStreamSynchronize, then each
// output's last CPU step (staged: memcpy out of staging). Strategies whose data is kept in GPU
// memory (data_path::resident: device, the floor, and peer) copy their inputs there beforehand
// and their outputs back afterwards, outside the timing. The steps of each, in words, are what
// steps() returns and reports show.
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
#include "memory/tensor_by_hand.hpp"

namespace ferry::bench {

class recipe {
 public:
  recipe(const recipe&) = delete;
  recipe& operator=(const recipe&) = delete;
  ~recipe();

  // The steps in words, for reports.
  [[nodiscard]] std::string_view steps() const noexcept { return steps_; }
  [[nodiscard]] strategy_kind strategy() const noexcept { return strategy_; }

  [[nodiscard]] std::size_t input_count() const noexcept { return inputs_.size(); }
  [[nodiscard]] std::size_t output_count() const noexcept { return outputs_.size(); }
  [[nodiscard]] const tensor_spec& input_spec(std::size_t i) const { return inputs_.at(i).spec; }
  [[nodiscard]] const tensor_spec& output_spec(std::size_t i) const { return outputs_.at(i).spec; }
  // Where the CPU writes input i before a request, and reads output i after one.
  [[nodiscard]] std::span<std::byte> input(std::size_t i) { return inputs_.at(i).memory->host(); }
  [[nodiscard]] std::span<const std::byte> output(std::size_t i) const { return outputs_.at(i).memory->host(); }

  // After the CPU wrote the inputs and outside the timing: a resident strategy's recipe copies
  // them to the GPU memory the engine reads (its inputs are there by definition). Nothing for the
  // others.
  void stage_inputs_untimed();
  // One request: the inputs reach the engine, the engine runs, the outputs reach the host.
  // Returns when the outputs are readable on the host.
  void run_blocking();
  // Outside the timing: a resident strategy's recipe copies its outputs back for a check. Nothing
  // for the others, whose outputs are on the host after run_blocking().
  void fetch_outputs_untimed();
  // Whether the CPU reads the outputs after a request (every recipe but a resident strategy's).
  [[nodiscard]] bool outputs_on_host() const noexcept { return !resident_; }

 private:
  friend std::unique_ptr<recipe> make_recipe(strategy_kind, engine&, const std::vector<tensor_spec>&,
                                             const device_caps&, oversubscription);
  struct tensor {
    tensor_spec spec;
    std::unique_ptr<memory::tensor_by_hand> memory;
  };
  recipe(strategy_kind strategy, engine& eng, const std::vector<tensor_spec>& io, const device_caps& caps);

  strategy_kind strategy_;
  std::string_view steps_;
  bool resident_;
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
