// One cell of the benchmark matrix: a workload under a strategy, measured with fresh input written
// and the output read every request, checked against the device reference, beside its recipe and
// the floor where it runs one request at a time, as trials until its figures are known well
// enough (cell_trials.hpp).
#include "bench/measure/cell_runner.hpp"

#include "bench/measure/cell_trials.hpp"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "bench/measure/cell_target.hpp"
#include "bench/measure/client_loop.hpp"
#include "bench/measure/gpu_delay.hpp"
#include "bench/measure/inflight_search.hpp"
#include "bench/measure/output_checks.hpp"
#include "bench/measure/paired_loop.hpp"
#include "bench/measure/recipes/recipe.hpp"
#include "bench/measure/um_count.hpp"
#include "core/scoped_device.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/bench/stopping.hpp"
#include "ferry/core/error.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/device/gpu_clocks.hpp"
#include "ferry/session/replica_set.hpp"

namespace ferry::bench {
namespace {

// A trial's own criterion: its share of the cell's limits (trial_limits), of its throughput window,
// or of a fixed count.
std::unique_ptr<stopping_criterion> criterion_for(const run_options& o, std::optional<std::size_t> count) {
  if (count) return std::make_unique<stop_after_count>(*count);
  const sampling_limits limits = trial_limits(o.limits);
  if (o.window_seconds) {
    // At least the trial's share of the window, until the rate is known to the trial's noise
    // target, at most its share of the cell's time.
    const double min_trials = static_cast<double>(std::max<std::size_t>(1, o.limits.min_trials));
    sampling_limits rate = limits;
    rate.min_seconds = *o.window_seconds / min_trials;
    rate.max_seconds = std::max(rate.min_seconds, std::max(*o.window_seconds, o.limits.max_seconds) / min_trials);
    return std::make_unique<stop_when_rate_quiet>(rate);
  }
  return std::make_unique<stop_when_quiet>(limits);
}

// What a trial learnt of its cell beside its samples: what the cell's result keeps of it.
struct trial_outcome {
  std::optional<trial_record> record;  // nullopt: the strategy was refused
  std::string refusal;
  std::size_t input_bytes = 0;
  std::size_t output_bytes = 0;
  std::vector<std::string> graph_fallbacks;  // why a capture fell back, per GPU
  std::vector<std::string> graph_notes;      // which graphs ran, where it is not the usual kind
  std::string recipe_note;                   // why no recipe or floor ran
  std::string recipe_steps;                  // the recipe's and the floor's steps, where they ran
  std::string floor_steps;
  std::optional<um_reading> um;  // counted after the cell's first trial
};

void set_io_bytes(const std::vector<tensor_spec>& io, trial_outcome& out) {
  for (const auto& t : io) (t.role == tensor_role::input ? out.input_bytes : out.output_bytes) += t.bytes();
}

// The one place a trial's outcome enters its cell's result (the samples go with the trials).
void keep(const trial_outcome& outcome, result_identity& id, result_diagnostics& d) {
  id.input_bytes = outcome.input_bytes;
  id.output_bytes = outcome.output_bytes;
  const auto note_once = [&d](const std::string& note) {
    if (std::find(d.notes.begin(), d.notes.end(), note) == d.notes.end()) d.notes.push_back(note);
  };
  for (const std::string& fallback : outcome.graph_fallbacks) {
    id.graph = false;
    note_once(fallback);
  }
  for (const std::string& note : outcome.graph_notes) note_once(note);
  if (!outcome.recipe_note.empty()) d.recipe_note = outcome.recipe_note;
  if (!outcome.recipe_steps.empty() && !d.recipe) d.recipe.emplace().steps = outcome.recipe_steps;
  if (!outcome.floor_steps.empty() && !d.floor) d.floor.emplace().steps = outcome.floor_steps;
  if (outcome.um) {
    d.um = outcome.um->traffic;
    d.um_note = outcome.um->note;
  }
}

// What the cell says of the graphs `measured` ran with, read after its requests (the engine's own
// graphs are captured after warm-up runs, so a capture may fail after the session began).
void note_graphs(session& measured, const std::string& gpu, trial_outcome& out) {
  const graph_status& g = measured.refresh_graph_status();
  if (!g.active)
    out.graph_fallbacks.push_back(gpu + g.reason);
  else if (g.kind == graph_kind::engine)
    out.graph_notes.push_back(
        "CUDA graphs captured by the engine itself (a plain capture cannot take it): one per slot, "
        "after warm-up runs; the copies around it run as without --graph, so every stage is timed");
}

// What a trial holds on GPU `ordinal` now, against the free memory before it started.
std::size_t held_since(std::size_t free_before, int ordinal) {
  const std::size_t now = query_free_memory(ordinal);
  return free_before > now ? free_before - now : 0;
}

double seconds_since(bench_clock::time_point start) {
  return std::chrono::duration<double>(bench_clock::now() - start).count();
}

// Closed-loop clients over `target` (several clients, slots or GPUs), checked.
trial_record measure_with_clients(const cell_target& target, const run_options& options, const stopping_criterion& stop,
                                  std::size_t free_before) {
  output_checks checks(target.references, target.request_bytes, options.check_every);
  checks.start(options.warmup, options.writes, options.data);
  client_loop loop(target, options, checks, stop);
  loop.run();
  trial_record t;
  t.device_bytes_used = held_since(free_before, target.devices.front());
  checks.finish();
  t.strategy = std::move(loop.samples());
  t.wall_seconds = std::chrono::duration<double>(t.strategy.last_done - t.strategy.start).count();
  return t;
}

// CUPTI's unified-memory counters after the trial, for the strategies that use managed memory.
// Counting is extra requests after the timed ones: a failure there leaves the figures standing.
um_reading count_managed_traffic(const cell_target& target, strategy_kind strategy, const run_options& options) {
  if (!properties(strategy).uses_managed_memory) return {.traffic = std::nullopt, .note = "no managed memory"};
  try {
    return count_um_traffic(target, options);
  } catch (const std::exception& e) {
    return {.traffic = std::nullopt, .note = std::string("the counted requests failed: ") + e.what()};
  }
}

// The strategy's recipe and the floor, or why not. The device strategy's recipe is the floor.
struct side_recipes {
  std::unique_ptr<recipe> own;
  std::unique_ptr<recipe> floor;
};

// Their steps go into the outcome now; their samples are pooled over the trials when the cell is
// assembled.
side_recipes make_side_recipes(strategy_kind strategy, engine& eng, const std::vector<tensor_spec>& io,
                               const device_caps& caps, const run_options& options, trial_outcome& outcome) {
  side_recipes out;
  try {
    out.own = make_recipe(strategy, eng, io, caps, options.session.managed_policy);
    if (strategy != strategy_kind::device)
      out.floor = make_recipe(strategy_kind::device, eng, io, caps, oversubscription::refuse);
  } catch (const unsupported& e) {
    outcome.recipe_note = std::string("no recipe: ") + e.what();
  } catch (const out_of_memory& e) {
    outcome.recipe_note = std::string("no recipe (out of memory): ") + e.what();
  }
  if (out.own) outcome.recipe_steps = out.own->steps();
  if (out.floor) outcome.floor_steps = out.floor->steps();
  return out;
}

// The run's options with their input data bound to the workload's concrete I/O, as the trial's
// loops fill inputs with it.
run_options with_data_for(const run_options& options, const std::vector<tensor_spec>& io) {
  run_options bound = options;
  bound.data = options.data.bound_to(io);
  return bound;
}

// One trial on one GPU: one session and its reference.
trial_outcome trial_on_one_gpu(const workload& w, strategy_kind strategy, const run_options& given,
                               const stopping_criterion& stop, bool first, gpu_delay* delay) {
  trial_outcome out;
  const int ordinal = given.devices.front();
  const device_caps& caps = given.capabilities.front();
  const std::size_t free_before = query_free_memory(ordinal);
  std::unique_ptr<engine> eng;
  {
    core::scoped_device on_device(ordinal);
    eng = w.make_engine(ordinal);
  }
  const auto io = eng->resolve(w.shapes);
  const run_options options = with_data_for(given, io);
  set_io_bytes(io, out);
  if (auto reason = unavailable_reason(strategy, caps)) {
    out.refusal = *reason;
    return out;
  }
  session_options session_settings = options.session;
  session_settings.strategy = strategy;
  // --slowdown's GPU half goes into the measured session's engine only: the reference, the recipe
  // and the floor run the engine as it is.
  const std::unique_ptr<engine> slowed = delay != nullptr ? delayed(*eng, *delay) : nullptr;
  session measured(slowed ? *slowed : *eng, io, session_settings, caps);
  session reference(*eng, io, {.strategy = strategy_kind::device, .inflight = 1}, caps);
  const bool one_at_a_time = options.clients == 1 && session_settings.inflight == 1;
  side_recipes sides;
  if (!options.recipes)
    out.recipe_note = "recipes off (--no-recipes)";
  else if (!one_at_a_time)
    out.recipe_note = "no recipe or floor: they run one request at a time, and this cell runs several at once";
  else
    sides = make_side_recipes(strategy, *eng, io, caps, options, out);

  cell_target target = single_session_target(measured, reference, ordinal);
  target.delay = delay;
  clock_monitor clocks(caps.pci_bus_id);
  if (options.warmup) {
    // The measured session last, so nothing else runs between its warm-up and its first request.
    reference.warmup(3, options.data);
    measured.warmup(3, options.data);
  }
  core::scoped_device on_device(ordinal);  // recipes run on their GPU
  trial_record& t = out.record.emplace();
  if (one_at_a_time) {
    output_checks checks(target.references, target.request_bytes, options.check_every);
    checks.start(options.warmup, options.writes, options.data);
    paired_loop loop(measured, sides.own.get(), sides.floor.get(), checks, options, stop, delay);
    loop.run();
    t.device_bytes_used = held_since(free_before, ordinal);
    checks.finish();
    t.paired = true;
    t.wall_seconds = loop.wall_seconds();
    t.strategy = std::move(loop.strategy());
    if (sides.own) t.recipe = std::move(loop.own_recipe());
    if (sides.floor) t.floor = std::move(loop.floor());
  } else {
    t = measure_with_clients(target, options, stop, free_before);
  }
  t.clocks = clocks.finish();
  if (session_settings.graph == graph_mode::on) note_graphs(measured, "", out);
  if (first) out.um = count_managed_traffic(target, strategy, options);
  return out;
}

// One trial on several GPUs: a replica_set spreads the requests, each GPU checks its own outputs.
trial_outcome trial_on_replicas(const workload& w, strategy_kind strategy, const run_options& given,
                                const stopping_criterion& stop, bool first, gpu_delay* delay) {
  trial_outcome out;
  const std::vector<device_caps>& caps = given.capabilities;
  for (const device_caps& gpu : caps) {
    if (auto reason = unavailable_reason(strategy, gpu)) {
      out.refusal = "GPU " + std::to_string(gpu.ordinal) + ": " + *reason;
      return out;
    }
  }
  const std::size_t free_before = query_free_memory(given.devices.front());
  session_options session_settings = given.session;
  session_settings.strategy = strategy;
  // --slowdown's GPU half in every replica's engine (the reference sessions share them: their
  // checks wait for it too, outside every timing).
  const auto make_engine = [&w, delay](int ordinal) {
    return delay != nullptr ? delayed(w.make_engine(ordinal), *delay) : w.make_engine(ordinal);
  };
  replica_set measured(caps, make_engine, w.shapes, session_settings);
  const run_options options = with_data_for(given, measured.io());
  set_io_bytes(measured.io(), out);
  out.recipe_note = "no recipe or floor: they run one request at a time on one GPU";
  std::vector<std::unique_ptr<session>> references;
  cell_target target{.acquire = [&measured] { return measured.acquire(); },
                     .acquire_on = [&measured](int d) { return measured.acquire_on(d); },
                     .devices = options.devices,
                     .total_slots = session_settings.inflight * static_cast<int>(measured.size()),
                     .strategy = strategy,
                     .references = {},
                     .request_bytes = io_bytes(measured.io()),
                     .delay = delay};
  for (std::size_t i = 0; i < measured.size(); ++i) {
    references.push_back(std::make_unique<session>(measured.engine_of(i), measured.io(),
                                                   session_options{.strategy = strategy_kind::device, .inflight = 1},
                                                   caps[i]));
    target.references.emplace(caps[i].ordinal, references.back().get());
  }
  clock_monitor clocks(caps.front().pci_bus_id);
  if (options.warmup) {
    for (auto& ref : references) ref->warmup(3, options.data);
    measured.warmup(3, options.data);
  }
  const auto before = measured.acquisitions();
  trial_record& t = out.record.emplace(measure_with_clients(target, options, stop, free_before));
  t.clocks = clocks.finish();
  const auto after = measured.acquisitions();
  for (std::size_t i = 0; i < after.size(); ++i) t.requests_per_gpu.push_back(after[i] - before[i]);
  if (session_settings.graph == graph_mode::on)
    for (std::size_t i = 0; i < measured.size(); ++i)
      note_graphs(measured.replica(i), fmt::format("GPU {}: ", caps[i].ordinal), out);
  if (first) out.um = count_managed_traffic(target, strategy, options);
  return out;
}

// One count of the depth search: one trial of the cell at that count.
strategy_result run_one_depth(const workload& w, strategy_kind strategy, const run_options& options) {
  cell_trials cell(w, strategy, options, trial_schedule::sequential, bench_clock::now(),
                   fmt::format("{} {} at {} slots", w.label, to_string(strategy), options.session.inflight));
  trial_cell* cells[] = {&cell};
  run_trials(cells, trial_schedule::sequential);
  return cell.finish();
}

}  // namespace

cell_trials::cell_trials(const workload& w, strategy_kind strategy, const run_options& options, trial_schedule schedule,
                         bench_clock::time_point run_start, std::string name)
    : workload_(w), strategy_(strategy), options_(options), run_start_(run_start), name_(std::move(name)) {
  result_.identity = cell_identity(w.label, strategy, options, schedule);
  if (options.slowdown > 0)
    result_.diagnostics.notes.push_back(
        fmt::format("slowed down on purpose: every request's GPU time was made {0:g}% longer by a spin kernel "
                    "after the engine, and every timed request waited until its latency was {0:g}% longer before "
                    "its clock stopped (--slowdown, a test hook; the recipe and the floor by the wait alone)",
                    100 * options.slowdown));
  if (options.iterations) {
    // A fixed count is shared among the trials (the first ones take the remainder), so the cell
    // has exactly that many samples.
    planned_trials_ =
        std::clamp<std::size_t>(options.limits.min_trials, 1, std::max<std::size_t>(1, *options.iterations));
  }
}

std::string cell_trials::describe() const {
  return fmt::format("{}, trial {}{}", name_, trials_.size() + 1,
                     options_.inflight_auto && !searched_ ? " (after the depth search)" : "");
}

void cell_trials::fail(cell_failure why) {
  result_.verdict.not_measured(std::move(why.reason), why.failed);
  done_ = true;
}

void cell_trials::stop(std::string why) {
  done_ = true;
  if (trials_.empty()) {
    fail({.reason = std::move(why), .failed = true});
    return;
  }
  result_.diagnostics.notes.push_back(
      fmt::format("{} trial{} only: {}", trials_.size(), trials_.size() == 1 ? "" : "s", why));
}

void cell_trials::search_depth() {
  searched_ = true;
  const depth_search choice =
      search_inflight_depth(workload_, strategy_, options_, run_one_depth, device_memory_reader(options_.devices));
  if (!choice.depth) {
    // Every step was refused or failed: the first says why.
    result_.verdict.not_measured(choice.explanation, !choice.steps.empty() && choice.steps.front().verdict.failed());
    if (!choice.steps.empty()) {
      result_.identity.input_bytes = choice.steps.front().identity.input_bytes;
      result_.identity.output_bytes = choice.steps.front().identity.output_bytes;
    }
    done_ = true;
    return;
  }
  options_.inflight_auto = false;
  options_.session.inflight = *choice.depth;
  result_.identity.inflight = *choice.depth;
  result_.diagnostics.notes.push_back(choice.explanation);
}

void cell_trials::run_trial() {
  if (done_) return;
  if (options_.capabilities.size() != options_.devices.size()) {
    // Not given by the run (run_cell alone): queried once for the cell, at its first trial (inside
    // the trials' boundary, so a device that cannot be queried fails the cell, not the run).
    options_.capabilities.clear();
    for (const int ordinal : options_.devices) options_.capabilities.push_back(query_device(ordinal));
  }
  if (options_.inflight_auto && !searched_) {
    search_depth();
    if (done_) return;
  }
  if (options_.devices.empty()) throw invalid_argument("no GPU to run on");
  const bool first = trials_.empty();
  std::optional<std::size_t> count;
  if (planned_trials_ > 0) {
    const std::size_t k = trials_.size();
    count = *options_.iterations / planned_trials_ + (k < *options_.iterations % planned_trials_ ? 1 : 0);
  }
  const auto stop = criterion_for(options_, count);
  const double started = seconds_since(run_start_);
  // One GPU delay for all of the cell's trials, so it keeps what it learnt of the GPU's time.
  if (options_.slowdown > 0 && !delay_) delay_ = std::make_shared<gpu_delay>(options_.slowdown);
  trial_outcome outcome = options_.devices.size() == 1
                              ? trial_on_one_gpu(workload_, strategy_, options_, *stop, first, delay_.get())
                              : trial_on_replicas(workload_, strategy_, options_, *stop, first, delay_.get());
  keep(outcome, result_.identity, result_.diagnostics);
  if (!outcome.record) {
    result_.verdict.refuse(std::move(outcome.refusal));
    done_ = true;
    return;
  }
  outcome.record->started_seconds = started;
  trials_.push_back(std::move(*outcome.record));
  if (delay_ && !floor_noted_) {
    if (auto note = delay_->floor_note(); !note.empty()) {
      result_.diagnostics.notes.push_back(std::move(note));
      floor_noted_ = true;
    }
  }
  stop_text_ = stop->describe();
  decide();
}

void cell_trials::decide() {
  if (planned_trials_ > 0) {
    done_ = trials_.size() >= planned_trials_;
    decision_ = done_ ? trials_decision::settled : trials_decision::more;
    return;
  }
  double seconds = 0;
  for (const auto& t : trials_) seconds += t.wall_seconds;
  decision_ = decide_trials(options_.limits, trials_.size(), seconds,
                            judged_noise_of(trials_, options_.window_seconds.has_value()));
  done_ = decision_ != trials_decision::more;
}

strategy_result cell_trials::finish() const {
  strategy_result r = result_;
  if (!r.verdict.measured() || trials_.empty()) {
    if (r.verdict.measured()) r.verdict.fail("no trial ran");
    r.diagnostics.recipe.reset();
    r.diagnostics.floor.reset();
    r.diagnostics.um.reset();
    return r;
  }
  return assemble_result(trials_, options_, decision_, stop_text_, std::move(r));
}

memory_reader device_memory_reader(const std::vector<int>& devices) {
  std::vector<std::pair<int, std::size_t>> totals;  // the cards' sizes do not change
  for (const int d : devices) totals.emplace_back(d, query_device(d).total_memory);
  return [totals] {
    gpu_memory least;
    for (const auto& [device, total] : totals) {
      const std::size_t free = query_free_memory(device);
      if (least.total_bytes == 0 || free < least.free_bytes) least = {.free_bytes = free, .total_bytes = total};
    }
    return least;
  };
}

strategy_result run_cell(const workload& w, strategy_kind strategy, const run_options& options) {
  cell_trials cell(w, strategy, options, trial_schedule::sequential, bench_clock::now(),
                   fmt::format("{} {}", w.label, to_string(strategy)));
  trial_cell* cells[] = {&cell};
  run_trials(cells, trial_schedule::sequential);
  return cell.finish();
}

}  // namespace ferry::bench
