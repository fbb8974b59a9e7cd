// One client, one slot, one GPU: each round runs one request of the strategy through its session,
// one of its recipe (the same steps by hand) and one of the floor (the engine alone on
// device-resident inputs), in an order that rotates from round to round. All three see the same
// state of the host and the GPU, so the gap between the strategy and its recipe is ferry's cost
// and the gap to the floor is the transfer's, even where the host drifts during the cell (a
// launch-bound engine ran 1.5 ms in one stretch and 2.3 ms in the next on the H200 host, with
// the GPU's clocks unchanged). Private to src/bench.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "bench/measure/cell_samples.hpp"
#include "bench/measure/l2_flush.hpp"
#include "bench/measure/output_checks.hpp"
#include "bench/measure/recipes/recipe.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/bench/stopping.hpp"
#include "ferry/session/session.hpp"

namespace ferry::bench {

class gpu_delay;

class paired_loop {
 public:
  // `own` and `floor` may be null (no recipe; the device strategy, whose recipe is the floor).
  // `delay`: --slowdown's GPU half in `measured`'s engine, or null (cell_target::delay).
  paired_loop(session& measured, recipe* own, recipe* floor, output_checks& checks, const run_options& options,
              const stopping_criterion& stop, gpu_delay* delay = nullptr);

  // Warms every series up until its latency settles (options.warmup), then runs rounds until the
  // criterion is met by every series.
  void run();
  [[nodiscard]] cell_samples& strategy() noexcept { return strategy_; }
  [[nodiscard]] cell_samples& own_recipe() noexcept { return recipe_; }
  [[nodiscard]] cell_samples& floor() noexcept { return floor_; }
  [[nodiscard]] double wall_seconds() const noexcept { return wall_seconds_; }

 private:
  using request = std::function<double(std::optional<std::uint64_t>)>;  // returns its latency
  double strategy_request(std::optional<std::uint64_t> seq);
  double recipe_request(recipe& r, cell_samples& into, std::uint64_t salt, std::optional<std::uint64_t> seq);
  // `t`: the stage times of a request timed with events (every other strategy request), whose
  // latency is not a sample (`is_latency_sample` false).
  void record(cell_samples& into, std::uint64_t seq, double latency_us, double fill_us, const stage_times* t,
              bool is_latency_sample);

  session& measured_;
  gpu_delay* delay_;
  recipe* own_;
  recipe* floor_recipe_;
  output_checks& checks_;
  const run_options& options_;
  const stopping_criterion& stop_rule_;
  std::optional<l2_flush> flush_;  // options.l2_flush
  std::vector<std::pair<request, cell_samples*>> series_;
  cell_samples strategy_, recipe_, floor_;
  std::uint64_t warmups_ = 0;
  std::uint64_t sink_ = 0;
  double wall_seconds_ = 0;
};

}  // namespace ferry::bench
