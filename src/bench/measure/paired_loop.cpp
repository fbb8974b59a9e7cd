#include "bench/measure/paired_loop.hpp"

#include <nvtx3/nvtx3.hpp>

#include "bench/measure/gpu_delay.hpp"
#include "bench/measure/host_probe.hpp"
#include "bench/measure/input_fill.hpp"

namespace ferry::bench {
namespace {

constexpr auto copy_probe_every = std::chrono::milliseconds(100);

}  // namespace

paired_loop::paired_loop(session& measured, recipe* own, recipe* floor, output_checks& checks,
                         const run_options& options, const stopping_criterion& stop, gpu_delay* delay)
    : measured_(measured),
      delay_(delay),
      own_(own),
      floor_recipe_(floor),
      checks_(checks),
      options_(options),
      stop_rule_(stop) {
  if (options_.l2_flush) flush_.emplace(measured_.ordinal());
  series_.emplace_back([this](auto seq) { return strategy_request(seq); }, &strategy_);
  // Distinct salts: every request of every series gets inputs of its own.
  if (own_ != nullptr)
    series_.emplace_back([this](auto seq) { return recipe_request(*own_, recipe_, 7919, seq); }, &recipe_);
  if (floor_recipe_ != nullptr)
    series_.emplace_back([this](auto seq) { return recipe_request(*floor_recipe_, floor_, 104729, seq); }, &floor_);
}

void paired_loop::run() {
  const std::size_t kinds = series_.size();
  if (options_.warmup) {
    nvtx3::scoped_range range{"ferry.paired_warmup"};
    settling_rule settled = options_.warmup_rule;
    settled.max_seconds *= static_cast<double>(kinds);
    std::vector<std::vector<double>> latencies(kinds);
    const auto begin = bench_clock::now();
    for (std::size_t round = 0;; ++round) {
      for (std::size_t k = 0; k < kinds; ++k) {
        const std::size_t which = (round + k) % kinds;
        latencies[which].push_back(series_[which].first(std::nullopt));
      }
      const double elapsed = std::chrono::duration<double>(bench_clock::now() - begin).count();
      bool all = true;
      for (const auto& l : latencies) all = all && settled.should_stop(l, elapsed);
      if (all) break;
    }
  }
  const auto start = bench_clock::now();
  for (auto& [request, samples] : series_) samples->start = samples->last_done = start;
  auto last_copy_probe = start - copy_probe_every;
  for (std::uint64_t round = 0;; ++round) {
    // The host probe between rounds, outside every request's timing (~60 us every 8 rounds).
    if (round % 8 == 0) {
      strategy_.host_probe.push_back(time_host_probe_us());
      strategy_.cuda_probe.push_back(time_cuda_probe_us());
    }
    // The memory-copy probe by the clock instead (~1-2 ms): often enough for a median over a
    // cell's trials, seldom enough to leave the caches to the requests.
    if (const auto now = bench_clock::now(); now - last_copy_probe >= copy_probe_every) {
      if (const double gbps = time_host_copy_gbps(); gbps > 0) strategy_.host_copy.push_back(gbps);
      last_copy_probe = now;
    }
    for (std::size_t k = 0; k < kinds; ++k) series_[(round + k) % kinds].first(round);
    const std::size_t n = strategy_.latency.size();
    if (n >= 200 && n % (n / 20) != 0) continue;
    std::vector<std::span<const double>> all;
    for (const auto& [request, samples] : series_) all.emplace_back(samples->latency);
    const double elapsed = std::chrono::duration<double>(bench_clock::now() - start).count();
    const stop_decision decision = stop_rule_.decide(all, elapsed);
    if (decision != stop_decision::keep_going) {
      for (auto& [request, samples] : series_) samples->stopped = decision;
      wall_seconds_ = elapsed;
      return;
    }
  }
}

double paired_loop::strategy_request(std::optional<std::uint64_t> seq) {
  filling_slot filling = measured_.acquire();
  const std::uint64_t seed = seq ? *seq * 131 : ~std::uint64_t{0} - 97 * ++warmups_;
  const auto fill_start = bench_clock::now();
  for (std::size_t i = 0; i < filling.input_count(); ++i)
    fill_fresh(filling.input(i), filling.input_spec(i), seed, options_.writes, options_.data);
  const double fill_us = micros(bench_clock::now() - fill_start);
  filling.upload_resident_inputs();
  byte_copies inputs;
  const bool check = checks_.reserve(seq);
  if (check)
    for (std::size_t i = 0; i < filling.input_count(); ++i)
      inputs.emplace_back(filling.input(i).begin(), filling.input(i).end());
  // Every other request is timed with CUDA events for the stage breakdown, and the others give
  // the latency: the recipe records no events, and ferry's requests need none either, so the
  // latency compares like with like (four events cost 4-7 µs on the H200 host).
  // With --slowdown's GPU half, warm-up requests are timed too: their GPU time sizes its delay
  // before the first measured request.
  const bool timed = seq ? *seq % 2 == 1 : delay_ != nullptr;
  if (flush_) flush_->flush_blocking();
  const auto submitted = bench_clock::now();
  completed_slot done = std::move(filling).submit(timed ? stage_timing::events : stage_timing::off).wait();
  if (properties(measured_.options().strategy).path != data_path::resident)
    for (std::size_t i = 0; i < done.output_count(); ++i) sink_ += read_every_byte(done.output(i));
  const double delayed_us = delay_ != nullptr ? delay_->delay_us() : 0;
  const double latency_us = micros(stretched(submitted, bench_clock::now(), options_.slowdown, delayed_us) - submitted);
  const stage_times times = done.times();
  if (delay_ != nullptr && timed && times.total_ms > 0) delay_->observe(times.total_ms * 1e3);
  if (check) {
    done.download_resident_outputs();
    byte_copies outputs;
    for (std::size_t i = 0; i < done.output_count(); ++i)
      outputs.emplace_back(done.output(i).begin(), done.output(i).end());
    checks_.keep(done.ordinal(), std::move(inputs), std::move(outputs), strategy_.checks);
  }
  if (seq) record(strategy_, *seq, latency_us, fill_us, timed ? &times : nullptr, !timed);
  return latency_us;
}

double paired_loop::recipe_request(recipe& r, cell_samples& into, std::uint64_t salt,
                                   std::optional<std::uint64_t> seq) {
  const std::uint64_t seed = (seq ? *seq * 131 : ~std::uint64_t{0} - 97 * ++warmups_) + salt;
  const auto fill_start = bench_clock::now();
  for (std::size_t i = 0; i < r.input_count(); ++i)
    fill_fresh(r.input(i), r.input_spec(i), seed, options_.writes, options_.data);
  const double fill_us = micros(bench_clock::now() - fill_start);
  r.stage_inputs_untimed();
  byte_copies inputs;
  const bool check = checks_.reserve(seq);
  if (check)
    for (std::size_t i = 0; i < r.input_count(); ++i) inputs.emplace_back(r.input(i).begin(), r.input(i).end());
  if (flush_) flush_->flush_blocking();
  const auto started = bench_clock::now();
  r.run_blocking();
  if (r.outputs_on_host())
    for (std::size_t i = 0; i < r.output_count(); ++i) sink_ += read_every_byte(r.output(i));
  const double latency_us = micros(stretched(started, bench_clock::now(), options_.slowdown) - started);
  if (check) {
    r.fetch_outputs_untimed();
    byte_copies outputs;
    for (std::size_t i = 0; i < r.output_count(); ++i) outputs.emplace_back(r.output(i).begin(), r.output(i).end());
    checks_.keep(measured_.ordinal(), std::move(inputs), std::move(outputs), into.checks);
  }
  if (seq) record(into, *seq, latency_us, fill_us, nullptr, true);
  return latency_us;
}

void paired_loop::record(cell_samples& into, std::uint64_t seq, double latency_us, double fill_us, const stage_times* t,
                         bool is_latency_sample) {
  const auto now = bench_clock::now();
  ++into.requests;
  into.last_done = now;
  into.busy_seconds += (fill_us + latency_us) * 1e-6;
  if (seq == 0) {
    into.cold_first = latency_us;
    return;
  }
  into.fill.push_back(fill_us);
  if (is_latency_sample) into.latency.push_back(latency_us);
  if (t == nullptr) return;
  into.gpu.push_back(t->total_ms * 1e3);
  if (t->h2d_ms) into.h2d.push_back(*t->h2d_ms * 1e3);
  into.compute.push_back(t->compute_ms ? *t->compute_ms * 1e3 : t->total_ms * 1e3);
  if (t->d2h_ms) into.d2h.push_back(*t->d2h_ms * 1e3);
  into.enqueue.push_back(t->enqueue_us);
}

}  // namespace ferry::bench
