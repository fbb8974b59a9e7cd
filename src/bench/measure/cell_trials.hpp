// One cell of the benchmark matrix as trials: each trial makes the measured session, its
// device-strategy reference and (one request at a time) the recipe and the floor afresh, warms
// them up, measures and releases everything before it returns, so nothing of one trial (buffers,
// slots, pages) is there when the next trial or another cell runs. Private to src/bench.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bench/measure/cell_result.hpp"
#include "bench/measure/inflight_search.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/bench/trials.hpp"

namespace ferry::bench {

class gpu_delay;

class cell_trials final : public trial_cell {
 public:
  // `w` must outlive the cell. `run_start`: when the run began (trials say when they started);
  // `name` for progress lines ("reduce 19MB pinned").
  cell_trials(const workload& w, strategy_kind strategy, const run_options& options, trial_schedule schedule,
              bench_clock::time_point run_start, std::string name);

  [[nodiscard]] bool wants_trial() const override { return !done_; }
  // The first trial of an --inflight auto cell searches the depth first (search_inflight_depth).
  void run_trial() override;
  void fail(cell_failure why) override;
  void stop(std::string why) override;
  [[nodiscard]] std::string describe() const override;

  // The cell's result: its trials pooled, or the refusal or failure.
  [[nodiscard]] strategy_result finish() const;

 private:
  void search_depth();
  void decide();

  const workload& workload_;
  strategy_kind strategy_;
  run_options options_;  // the cell's; after the search, at the depth found
  bench_clock::time_point run_start_;
  std::string name_;
  strategy_result result_;  // identity, refusal and what the first trial learnt (notes, UM traffic)
  std::vector<trial_record> trials_;
  std::size_t planned_trials_ = 0;  // a fixed count (--iterations): exactly this many trials
  trials_decision decision_ = trials_decision::more;
  std::string stop_text_;  // a trial's own criterion, in words
  bool searched_ = false;
  bool done_ = false;
  // --slowdown's GPU half, made at the first trial and kept for the rest (a shared_ptr: gpu_delay
  // is incomplete here).
  std::shared_ptr<gpu_delay> delay_;
  bool floor_noted_ = false;  // the delay's floor_note is in the notes
};

}  // namespace ferry::bench
