// One cell of the benchmark matrix: a workload under a strategy, measured with fresh input written
// and the output read every request, checked against the device reference, beside its recipe and
// the floor where it runs one request at a time, until its figures are known well enough.
#include <memory>

#include <fmt/format.h>

#include "bench/cell_result.hpp"
#include "bench/cell_target.hpp"
#include "bench/client_loop.hpp"
#include "bench/output_checks.hpp"
#include "bench/paired_loop.hpp"
#include "bench/recipes/recipe.hpp"
#include "bench/um_count.hpp"
#include "core/scoped_device.hpp"
#include "ferry/bench/run.hpp"
#include "ferry/bench/stopping.hpp"
#include "ferry/device_caps.hpp"
#include "ferry/error.hpp"
#include "ferry/gpu_clocks.hpp"
#include "ferry/replica_set.hpp"

namespace ferry::bench {
namespace {

std::unique_ptr<stopping_criterion> criterion_for(const run_options& o) {
  if (o.iterations) return std::make_unique<stop_after_count>(*o.iterations);
  if (o.window_seconds) {
    // At least the window, until the rate is known to max_noise, at most max_seconds.
    sampling_limits rate = o.limits;
    rate.min_seconds = *o.window_seconds;
    rate.max_seconds = std::max(*o.window_seconds, o.limits.max_seconds);
    return std::make_unique<stop_when_rate_quiet>(rate);
  }
  return std::make_unique<stop_when_quiet>(o.limits);
}

void add_io_bytes(const std::vector<tensor_spec>& io, strategy_result& r) {
  for (const auto& t : io) (t.role == tensor_role::input ? r.input_bytes : r.output_bytes) += t.bytes();
}

// Samples the clocks of the cell's GPUs (the first: one NVML sampler is enough to see a change
// of the card's state, and a multi-GPU cell's GPUs share a host).
struct clock_watch {
  explicit clock_watch(const device_caps& caps) : monitor(caps.pci_bus_id) {}
  void finish_into(strategy_result& r) {
    r.clocks = monitor.finish();
    if (!r.clocks) r.clocks_note = "no GPU clock readings (NVML unavailable)";
  }
  clock_monitor monitor;
};

// Closed-loop clients over `target` (several clients, slots or GPUs), checked, into `r`.
void measure_with_clients(const cell_target& target, const run_options& options, const stopping_criterion& stop,
                          strategy_result& r) {
  output_checks checks(target.references, target.request_bytes, options.check_every);
  checks.start(options.warmup, options.writes);
  client_loop loop(target, options, checks, stop);
  loop.run();
  checks.finish();
  cell_samples& s = loop.samples();
  assemble_result(s, std::chrono::duration<double>(s.last_done - s.start).count(), false, options, stop, r);
}

// CUPTI's unified-memory counters after the cell, for the strategies that use managed memory.
void count_managed_traffic(const cell_target& target, strategy_kind strategy, const run_options& options,
                           strategy_result& r) {
  if (properties(strategy).uses_managed_memory)
    count_um_traffic(target, options, r);
  else
    r.um_note = "no managed memory";
}

// The strategy's recipe and the floor, or why not. The device strategy's recipe is the floor.
struct side_recipes {
  std::unique_ptr<recipe> own;
  std::unique_ptr<recipe> floor;
};

side_recipes make_side_recipes(strategy_kind strategy, engine& eng, const std::vector<tensor_spec>& io,
                               const device_caps& caps, const run_options& options, strategy_result& r) {
  side_recipes out;
  try {
    out.own = make_recipe(strategy, eng, io, caps, options.session.managed_policy);
    if (strategy != strategy_kind::device) out.floor = make_recipe(strategy_kind::device, eng, io, caps, oversubscription::refuse);
  } catch (const unsupported& e) {
    r.recipe_note = std::string("no recipe: ") + e.what();
  } catch (const out_of_memory& e) {
    r.recipe_note = std::string("no recipe (out of memory): ") + e.what();
  }
  return out;
}

// One GPU: one session and its reference.
void run_on_one_gpu(const workload& w, strategy_kind strategy, const run_options& options, strategy_result& r) {
  const int device = options.devices.front();
  const device_caps caps = query_device(device);
  std::unique_ptr<engine> eng;
  {
    core::scoped_device on_device(device);
    eng = w.make_engine(device);
  }
  const auto io = eng->resolve(w.shapes);
  add_io_bytes(io, r);
  if (auto reason = unavailable_reason(strategy, caps)) {
    r.refused = *reason;
    return;
  }
  session_options session_settings = options.session;
  session_settings.strategy = strategy;
  session measured(*eng, io, session_settings, caps);
  if (session_settings.graph == graph_mode::on && !measured.graph().active) {
    r.graph = false;
    r.notes.push_back(measured.graph().reason);
  }
  session reference(*eng, io, {.strategy = strategy_kind::device, .inflight = 1}, caps);
  const bool one_at_a_time = options.clients == 1 && session_settings.inflight == 1;
  side_recipes sides;
  if (!options.recipes)
    r.recipe_note = "recipes off (--no-recipes)";
  else if (!one_at_a_time)
    r.recipe_note = "no recipe or floor: they run one request at a time, and this cell runs several at once";
  else
    sides = make_side_recipes(strategy, *eng, io, caps, options, r);

  const cell_target target = single_session_target(measured, reference, device);
  const auto stop = criterion_for(options);
  clock_watch clocks(caps);
  if (options.warmup) {
    // The measured session last, so nothing else runs between its warm-up and its first request.
    reference.warmup();
    measured.warmup();
  }
  core::scoped_device on_device(device);  // recipes run on their GPU
  if (one_at_a_time) {
    output_checks checks(target.references, target.request_bytes, options.check_every);
    checks.start(options.warmup, options.writes);
    paired_loop loop(measured, sides.own.get(), sides.floor.get(), checks, options, *stop);
    loop.run();
    checks.finish();
    assemble_result(loop.strategy(), loop.wall_seconds(), true, options, *stop, r);
    if (sides.own) r.recipe = assemble_side_run(loop.own_recipe(), sides.own->steps());
    if (sides.floor) r.floor = assemble_side_run(loop.floor(), sides.floor->steps());
  } else {
    measure_with_clients(target, options, *stop, r);
  }
  clocks.finish_into(r);
  count_managed_traffic(target, strategy, options, r);
}

// Several GPUs: a replica_set spreads the requests, each GPU checks its own outputs.
void run_on_replicas(const workload& w, strategy_kind strategy, const run_options& options, strategy_result& r) {
  std::vector<device_caps> caps;
  for (const int d : options.devices) {
    caps.push_back(query_device(d));
    if (auto reason = unavailable_reason(strategy, caps.back())) {
      r.refused = "GPU " + std::to_string(d) + ": " + *reason;
      return;
    }
  }
  session_options session_settings = options.session;
  session_settings.strategy = strategy;
  replica_set measured(caps, w.make_engine, w.shapes, session_settings);
  add_io_bytes(measured.io(), r);
  for (std::size_t i = 0; i < measured.size(); ++i) {
    if (session_settings.graph == graph_mode::on && !measured.replica(i).graph().active) {
      r.graph = false;
      r.notes.push_back(fmt::format("GPU {}: {}", caps[i].ordinal, measured.replica(i).graph().reason));
    }
  }
  r.recipe_note = "no recipe or floor: they run one request at a time on one GPU";
  std::vector<std::unique_ptr<session>> references;
  cell_target target{.acquire = [&measured] { return measured.acquire(); },
                     .acquire_on = [&measured](int d) { return measured.acquire_on(d); },
                     .devices = options.devices,
                     .total_slots = session_settings.inflight * static_cast<int>(measured.size()),
                     .strategy = strategy,
                     .references = {},
                     .request_bytes = io_bytes(measured.io())};
  for (std::size_t i = 0; i < measured.size(); ++i) {
    references.push_back(std::make_unique<session>(
        measured.engine_of(i), measured.io(),
        session_options{.strategy = strategy_kind::device, .inflight = 1}, caps[i]));
    target.references.emplace(caps[i].ordinal, references.back().get());
  }
  const auto stop = criterion_for(options);
  clock_watch clocks(caps.front());
  if (options.warmup) {
    for (auto& ref : references) ref->warmup();
    measured.warmup();
  }
  const auto before = measured.acquisitions();
  measure_with_clients(target, options, *stop, r);
  clocks.finish_into(r);
  count_managed_traffic(target, strategy, options, r);
  // How the load was spread: each GPU's share of the requests (warm-ups and checks excluded).
  const auto after = measured.acquisitions();
  std::string shares;
  for (std::size_t i = 0; i < after.size(); ++i)
    shares += fmt::format("{}GPU {}: {}", i ? ", " : "", caps[i].ordinal, after[i] - before[i]);
  r.notes.push_back("requests per GPU: " + shares);
}

strategy_result run_one_depth(const workload& w, strategy_kind strategy, const run_options& options) {
  strategy_result r;
  r.strategy = std::string(to_string(strategy));
  r.engine = w.label;
  r.inflight = options.session.inflight;
  r.clients = options.clients;
  r.devices = options.devices;
  r.graph = options.session.graph == graph_mode::on;
  r.warmed_up = options.warmup;
  r.input_writes = std::string(to_string(options.writes));
  try {
    if (options.devices.empty()) throw invalid_argument("no GPU to run on");
    if (options.devices.size() == 1)
      run_on_one_gpu(w, strategy, options, r);
    else
      run_on_replicas(w, strategy, options, r);
  } catch (const unsupported& e) {
    r.refused = e.what();
  } catch (const out_of_memory& e) {
    r.refused = std::string("out of memory: ") + e.what();
  } catch (const std::exception& e) {
    r.refused = std::string("failed: ") + e.what();
  }
  return r;
}

}  // namespace

strategy_result run_cell(const workload& w, strategy_kind strategy, const run_options& options) {
  if (!options.inflight_auto) return run_one_depth(w, strategy, options);
  const inflight_choice choice = choose_inflight(w, strategy, options, run_one_depth);
  if (!choice.depth) {
    strategy_result refused = choice.trials.empty() ? strategy_result{} : choice.trials.front();
    if (!refused.refused) refused.refused = choice.explanation;
    return refused;
  }
  run_options chosen = options;
  chosen.inflight_auto = false;
  chosen.session.inflight = *choice.depth;
  strategy_result r = run_one_depth(w, strategy, chosen);
  r.notes.push_back(choice.explanation);
  return r;
}

}  // namespace ferry::bench
