// One cell of the benchmark matrix: a workload under a strategy, measured as DESIGN.md §5 asks.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <limits>
#include <barrier>
#include <latch>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nvtx3/nvtx3.hpp>

#include "bench/input_fill.hpp"
#include "bench/overhead_pairs.hpp"
#include "bench/output_check.hpp"
#include "bench/um_counters.hpp"
#include "memory/allocations.hpp"
#include "ferry/bench.hpp"
#include "ferry/bench_stats.hpp"
#include "ferry/buffer.hpp"
#include "ferry/device_caps.hpp"
#include "ferry/device_set.hpp"
#include "ferry/error.hpp"
#include "ferry/replica_set.hpp"

namespace ferry::bench {
namespace {

using clock = std::chrono::steady_clock;

double micros(clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// Samples of the timed requests, shared by the client threads.
struct samples {
  std::mutex mutex;
  std::vector<double> latency, fill, h2d, compute, d2h;
  std::optional<double> cold_first;
  std::size_t requests = 0;  // all completed, the cold one included (throughput counts it)
  clock::time_point start{};
  clock::time_point last_done{};
  bool checked = false;
  bool all_match = true;
  std::size_t compared = 0;
  std::string mismatch;
};

// Reads every byte of the outputs the way a client consuming them would; the sum keeps the
// compiler from dropping the reads.
std::uint64_t read_outputs(const completed_slot& done) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < done.output_count(); ++i) {
    const auto bytes = done.output(i);
    const auto* words = reinterpret_cast<const std::uint64_t*>(bytes.data());
    const std::size_t n = bytes.size() / 8;
    for (std::size_t k = 0; k < n; ++k) sum += words[k];
    for (std::size_t k = n * 8; k < bytes.size(); ++k) sum += static_cast<std::uint8_t>(bytes[k]);
  }
  return sum;
}

// Runs `inputs` through the device-resident reference session and compares `outputs` with it.
void check_against_reference(session& reference, std::mutex& reference_mutex,
                             const std::vector<std::vector<std::byte>>& inputs,
                             const std::vector<std::vector<std::byte>>& outputs, samples& out) {
  std::lock_guard lock(reference_mutex);
  auto filling = reference.acquire();
  for (std::size_t i = 0; i < inputs.size(); ++i)
    std::memcpy(filling.input(i).data(), inputs[i].data(), inputs[i].size());
  filling.stage_resident_inputs_untimed();
  auto done = std::move(filling).submit().wait();
  done.fetch_resident_outputs_untimed();
  // Compare first, then take the samples lock only to add up: comparing 4 MB of fp16 takes tens
  // of milliseconds, and every client records its latency under that lock. Holding it here was
  // the periodic 25-32 ms p99 stall of multi-client runs.
  std::vector<check_outcome> outcomes;
  for (std::size_t i = 0; i < outputs.size(); ++i)
    outcomes.push_back(compare_output(outputs[i], done.output(i), done.output_spec(i)));
  std::lock_guard samples_lock(out.mutex);
  out.checked = true;
  for (const auto& outcome : outcomes) {
    out.compared += outcome.compared;
    if (!outcome.matches && out.all_match) {
      out.all_match = false;
      out.mismatch = outcome.first_mismatch;
    }
  }
}

// Where a cell's requests get their slots: one session, or a replica_set over several GPUs.
// Each GPU has its own device-strategy reference session, on that GPU's engine replica, so every
// output is checked on the GPU that produced it.
struct cell_target {
  std::function<filling_slot()> acquire;              // the slot for the next request
  std::function<filling_slot(int device)> acquire_on;  // a slot on that GPU (per-thread warm-up)
  std::vector<int> devices;
  int total_slots = 1;
  strategy_kind strategy = strategy_kind::pinned;
  std::map<int, session*> references;                 // by GPU
  std::size_t request_bytes = 0;                      // inputs + outputs: what one check keeps
};

std::size_t io_bytes(const std::vector<tensor_spec>& io) {
  std::size_t total = 0;
  for (const auto& t : io) total += t.bytes();
  return total;
}

cell_target single_session_target(session& measured, session& reference, int device) {
  return {.acquire = [&measured] { return measured.acquire(); },
          .acquire_on = [&measured](int) { return measured.acquire(); },
          .devices = {device},
          .total_slots = measured.slots(),
          .strategy = measured.options().strategy,
          .references = {{device, &reference}},
          .request_bytes = io_bytes(measured.io())};
}

class cell_run {
 public:
  cell_run(const cell_target& target, const run_options& options)
      : target_(target),
        options_(options),
        resident_(properties(target.strategy).path == data_path::resident) {
    for (const auto& [device, reference] : target.references) (void)reference_mutex_[device];
    rule_.min_seconds = options.min_seconds;
    rule_.max_seconds = options.max_seconds;
    rule_.min_iterations = 20;
  }

  void run() {
    // The clock starts once every client thread exists and, with warm-up, has run untimed
    // requests of its own until their latency settled (warm_up): engines keep per-thread state
    // (libtorch makes a cuDNN and a cuBLAS handle per host thread, ~50 ms on our H200 host),
    // which a long-lived server thread pays once, not on a measured request. Without warm-up
    // each thread's first request stays in.
    std::barrier ready(options_.clients, [this]() noexcept {
      start_ = clock::now();
      samples_.start = start_;
      samples_.last_done = start_;
    });
    // Output checks run on their own thread, and only once the timed requests are over: the
    // reference run of a check moves the request's bytes over the same link again and its
    // comparison reads them on the same CPU, so a check running next to timed requests slowed
    // them (touch 19 MB: a check every 64 requests kept the checker busy through ~8 of them and
    // put pinned H2D at 86.5% of the link instead of reduce's 94%). The checked requests keep
    // copies of their inputs and outputs meanwhile, within check_budget_bytes.
    // The checker runs the reference engine on its own thread, so it warms that thread too: its
    // first reference run would otherwise hold the engine (one AOTInductor runner per slot) for
    // the ~50 ms of libtorch's per-thread set-up.
    //
    // The checker warms up first and the clients after it, so the last client to finish its
    // warm-up completes the barrier and starts at once: its first request follows its warm-up
    // with no gap in which the CPU core or the GPU could idle down (a concurrent reference
    // warm-up also evicted the measured request's data from the GPU's L2 just before it ran).
    // The checker then sleeps until the clients are done and is woken by nothing else: it is not
    // in the barrier, because waking it there put its wake-up on the CPU just as the first timed
    // request ran (a few µs on a 15 µs request).
    std::latch reference_warm(1);
    std::thread checker([this, &reference_warm] {
      if (options_.warmup) warm_reference_on_this_thread();
      reference_warm.count_down();
      check_loop();
    });
    const std::function<void()> start_together = [&ready] { ready.arrive_and_wait(); };
    auto client_thread = [this, &start_together, &reference_warm] {
      reference_warm.wait();
      client(start_together);
    };
    std::vector<std::thread> clients;
    for (int c = 1; c < options_.clients; ++c) clients.emplace_back(client_thread);
    client_thread();
    for (auto& t : clients) t.join();
    {
      std::lock_guard lock(checks_mutex_);
      clients_done_ = true;
    }
    checks_ready_.notify_one();
    checker.join();
  }

  samples& result() { return samples_; }
  bool hit_cap() const { return hit_cap_; }

 private:
  // One request between submit and completion, with what its output check needs.
  struct in_flight {
    pending_slot pending;
    std::optional<std::uint64_t> seq;  // none: a warm-up request, not recorded
    clock::time_point submitted;
    double fill_us;
    std::vector<std::vector<std::byte>> inputs;  // copies, only for checked requests
  };

  // A closed-loop client that keeps up to `depth` requests in flight: it fills and submits
  // request k+1 while request k is still on the GPU, which is what --inflight buys. With warm-up
  // it first runs the same loop untimed, until its latency settles (warm_up), then waits for the
  // other threads at `start_together` and runs the timed requests.
  void client(const std::function<void()>& start_together) {
    if (options_.warmup) warm_up();
    start_together();
    std::deque<in_flight> queue;
    while (!stop_.load(std::memory_order_relaxed)) {
      queue.push_back(start_request(target_.acquire(), next_.fetch_add(1)));
      if (queue.size() >= depth()) {
        finish_request(std::move(queue.front()));
        queue.pop_front();
      }
    }
    for (auto& r : queue) finish_request(std::move(r));
  }

  // Slots of every GPU together, shared out among the clients (one GPU: --inflight / --clients).
  std::size_t depth() const {
    return static_cast<std::size_t>(std::max(1, target_.total_slots / options_.clients));
  }

  // Untimed requests through the very code of the timed ones (fresh input, output read, the same
  // functions, so their instructions and allocations are warm too), until the latency has settled,
  // on every GPU (a client thread may be handed a slot of any of them). One warm-up request was
  // not enough: after it, the first timed request was still over 1.1x the median in 12 of 80
  // cells, up to 2.4x for managed-prefetch, whose pages and the driver's migration heuristics take
  // several round trips to settle. The rule asks for the level to have stopped moving, not for the
  // last request to have been fast, so the clock does not start on a lucky sample.
  void warm_up() {
    nvtx3::scoped_range range{"ferry.client_warmup"};
    const stopping_rule settled{.min_iterations = 6, .max_iterations = 64, .min_seconds = 0.02,
                                .max_seconds = 0.5, .tolerance = 0.05};
    for (const int device : target_.devices) {
      std::vector<double> latencies;
      std::deque<in_flight> queue;
      const auto begin = clock::now();
      while (!settled.should_stop(latencies, std::chrono::duration<double>(clock::now() - begin).count())) {
        queue.push_back(start_request(target_.acquire_on(device), std::nullopt));
        if (queue.size() >= depth()) {
          latencies.push_back(finish_request(std::move(queue.front())));
          queue.pop_front();
        }
      }
      for (auto& r : queue) (void)finish_request(std::move(r));
    }
  }

  // One untimed request through `filling`, fresh inputs from `seed`: the CPU writes them, the
  // pipeline runs, and the caller gets the completed slot to read.
  completed_slot run_untimed(filling_slot filling, std::uint64_t seed) const {
    for (std::size_t i = 0; i < filling.input_count(); ++i)
      fill_fresh(filling.input(i), filling.input_spec(i), seed - i, options_.writes);
    filling.stage_resident_inputs_untimed();
    return std::move(filling).submit().wait();
  }

  void warm_reference_on_this_thread() {
    for (const auto& [device, reference] : target_.references) {
      std::lock_guard lock(reference_mutex_.at(device));
      (void)run_untimed(reference->acquire(), ~std::uint64_t{0} - 7);
    }
  }

  in_flight start_request(filling_slot filling, std::optional<std::uint64_t> seq) {
    nvtx3::scoped_range range{"ferry.fill_and_submit"};
    const auto fill_start = clock::now();
    const std::uint64_t seed = seq ? *seq * 131 : ~std::uint64_t{0} - 97 * warmups_.fetch_add(1);
    for (std::size_t i = 0; i < filling.input_count(); ++i)
      fill_fresh(filling.input(i), filling.input_spec(i), seed + i, options_.writes);
    const auto fill_end = clock::now();
    filling.stage_resident_inputs_untimed();

    std::vector<std::vector<std::byte>> inputs;
    // Requests 1 and 2 and every check_every-th are checked; request 0 is not, so the first
    // request after warm-up runs exactly like the steady state (the copy a check needs would
    // otherwise sit between warm-up and the first submit).
    const bool due = seq && (*seq == 1 || *seq == 2 || (*seq > 0 && *seq % options_.check_every == 0));
    if (due && reserve_check_bytes())
      for (std::size_t i = 0; i < filling.input_count(); ++i)
        inputs.emplace_back(filling.input(i).begin(), filling.input(i).end());
    const auto submitted = clock::now();
    return {std::move(filling).submit(), seq, submitted, micros(fill_end - fill_start), std::move(inputs)};
  }

  // Returns the request's latency; only timed requests are recorded.
  double finish_request(in_flight r) {
    nvtx3::scoped_range range{"ferry.wait_and_read"};
    auto done = std::move(r.pending).wait();
    // The device strategy's outputs stay on the device by definition: there is nothing on the
    // host to read, and reading its stale shadow would put host work into the floor.
    if (!resident_) sink_ += read_outputs(done);
    const auto readable = clock::now();
    const stage_times times = done.times();

    const bool check = !r.inputs.empty();
    const int device = done.device();
    std::vector<std::vector<std::byte>> outputs;
    if (check) {
      done.fetch_resident_outputs_untimed();
      for (std::size_t i = 0; i < done.output_count(); ++i)
        outputs.emplace_back(done.output(i).begin(), done.output(i).end());
    }
    { auto release = std::move(done); }  // give the slot back before the reference runs

    const double latency_us = micros(readable - r.submitted);
    if (r.seq) record(*r.seq, latency_us, r.fill_us, times, readable);
    if (check) {  // no notify: the checker waits for the end of the run (see run())
      std::lock_guard lock(checks_mutex_);
      checks_.push_back({device, std::move(r.inputs), std::move(outputs)});
    }
    return latency_us;
  }

  // Kept copies of checked requests wait for the end of the run; past the budget a due check is
  // skipped. 2 GiB holds 256 checks of mlp:48x2048 b1024 (4 MB in, 4 MB out; a 3 s run at
  // 1000 req/s makes 47) or 16 of touch 64 MB; requests 1 and 2 always fit.
  static constexpr std::size_t check_budget_bytes = std::size_t{2} << 30;
  bool reserve_check_bytes() {
    const std::size_t need = std::max<std::size_t>(target_.request_bytes, 1);
    std::size_t held = check_bytes_held_.load();
    do {
      if (held + need > check_budget_bytes && held > 0) return false;
    } while (!check_bytes_held_.compare_exchange_weak(held, held + need));
    return true;
  }

  struct pending_check {
    int device;  // checked against the reference on the GPU that ran it
    std::vector<std::vector<std::byte>> inputs;
    std::vector<std::vector<std::byte>> outputs;
  };

  void check_loop() {
    for (;;) {
      std::unique_lock lock(checks_mutex_);
      checks_ready_.wait(lock, [this] { return clients_done_; });
      if (checks_.empty()) return;  // clients are done and every check has run
      pending_check next = std::move(checks_.front());
      checks_.pop_front();
      lock.unlock();
      check_against_reference(*target_.references.at(next.device), reference_mutex_.at(next.device),
                              next.inputs, next.outputs, samples_);
    }
  }

  void record(std::uint64_t seq, double latency_us, double fill_us, const stage_times& t,
              clock::time_point done_at) {
    std::lock_guard lock(samples_.mutex);
    ++samples_.requests;
    samples_.last_done = std::max(samples_.last_done, done_at);
    if (seq == 0) {
      samples_.cold_first = latency_us;  // kept out of the statistics
      return;
    }
    samples_.latency.push_back(latency_us);
    samples_.fill.push_back(fill_us);
    if (t.h2d_ms) samples_.h2d.push_back(*t.h2d_ms * 1e3);
    samples_.compute.push_back(t.compute_ms ? *t.compute_ms * 1e3 : t.total_ms * 1e3);
    if (t.d2h_ms) samples_.d2h.push_back(*t.d2h_ms * 1e3);
    decide_stop();
  }

  // Called with samples_.mutex held.
  void decide_stop() {
    const std::size_t n = samples_.latency.size();
    if (options_.iterations) {
      if (n >= *options_.iterations) stop_ = true;
      return;
    }
    // The rule costs O(n); asking it every ~5% of the samples keeps that out of the way.
    if (n < rule_.min_iterations || n % std::max<std::size_t>(1, n / 20) != 0) {
      if (std::chrono::duration<double>(clock::now() - start_).count() < rule_.max_seconds) return;
    }
    const double elapsed = std::chrono::duration<double>(clock::now() - start_).count();
    const auto decision = rule_.decide(samples_.latency, elapsed);
    if (decision != stop_decision::keep_going) {
      hit_cap_ = decision != stop_decision::settled;
      stop_ = true;
    }
  }

  const cell_target& target_;
  const run_options& options_;
  bool resident_;
  stopping_rule rule_;
  samples samples_;
  std::map<int, std::mutex> reference_mutex_;  // one per reference session
  std::mutex checks_mutex_;
  std::condition_variable checks_ready_;
  std::deque<pending_check> checks_;
  bool clients_done_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> next_{0};
  std::atomic<std::uint64_t> warmups_{0};
  std::atomic<std::uint64_t> sink_{0};
  std::atomic<std::size_t> check_bytes_held_{0};
  clock::time_point start_;
  bool hit_cap_ = false;
};

// CUPTI's counters slow migrations down, so they run over extra requests after the timed ones
// and the result is per request.
void count_um_traffic(const cell_target& target, const run_options& options, strategy_result& r) {
  if (!options.um_counters) {
    r.um_note = "unified-memory counters off (--no-um-counters)";
    return;
  }
  constexpr std::size_t counted_requests = 16;
  auto counters = um_counter_session::start(target.devices.front());  // process-wide anyway
  if (!counters.available()) {
    r.um_note = counters.reason();
    return;
  }
  run_options extra = options;
  extra.iterations = counted_requests;
  extra.check_every = std::numeric_limits<std::size_t>::max();
  extra.warmup = false;  // the cell just ran: the pages are where its steady state keeps them
  cell_run counted(target, extra);
  counted.run();
  // CUPTI can deliver a flush's records late; keep taking until a take adds nothing.
  std::optional<um_traffic> total = counters.take();
  if (!total) {
    r.um_note = counters.reason();
    return;
  }
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto late = counters.take();
    if (!late || (late->bytes_host_to_device == 0 && late->bytes_device_to_host == 0 &&
                  late->gpu_page_faults == 0 && late->cpu_page_faults == 0))
      break;
    *total += *late;
  }
  const auto n = counted.result().requests;
  r.um = um_traffic{total->bytes_host_to_device / n, total->bytes_device_to_host / n,
                    total->gpu_page_faults / n, total->cpu_page_faults / n};
  r.um_note = fmt::format("per request, averaged over {} requests counted after the timed ones", n);
  if (counters.dropped_records() > 0)
    r.um_note += fmt::format("; {} CUPTI records dropped: lower bounds", counters.dropped_records());
}

double gbps(std::size_t bytes, const sample_stats& stage) {
  return stage.count == 0 || stage.median < 1.0 ? 0.0 : gigabytes_per_second(bytes, stage.median);
}

}  // namespace

namespace {

// Measures `target` and fills the statistics of `r` (shared by the one-GPU and replica paths).
void measure(const cell_target& target, strategy_kind strategy, const run_options& options, strategy_result& r) {
  cell_run run(target, options);
  run.run();
  samples& s = run.result();
  if (properties(strategy).uses_managed_memory)
    count_um_traffic(target, options, r);
  else
    r.um_note = "no managed memory";

  r.iterations = s.latency.size();
  r.latency_us = summarize(s.latency);
  r.fill_us = summarize(s.fill);
  r.h2d_us = summarize(s.h2d);
  r.compute_us = summarize(s.compute);
  r.d2h_us = summarize(s.d2h);
  r.cold_first_us = s.cold_first.value_or(0);
  if (s.cold_first) r.cold_first_percentile = percentile_rank(s.latency, *s.cold_first);
  r.wall_seconds = std::chrono::duration<double>(s.last_done - s.start).count();
  r.throughput_per_s = throughput_per_second(s.requests, r.wall_seconds);
  r.relative_iqr = relative_iqr(r.latency_us);
  r.noisy = run.hit_cap();
  const auto path = properties(strategy).path;
  if (path == data_path::copy || strategy == strategy_kind::managed_prefetch) {
    r.h2d_gbps = gbps(r.input_bytes, r.h2d_us);
    r.d2h_gbps = gbps(r.output_bytes, r.d2h_us);
  } else if (path == data_path::zero_copy && target.devices.size() == 1 && options.inflight == 1 &&
             options.clients == 1) {
    // Zero-copy has no copy stage: the engine reads its inputs and writes its outputs over the
    // link while it runs, so the bus rate is the bytes over the engine's event-timed span, the
    // same clock the copy stage is timed with (the launch and the host's wait are not in it).
    // A lower bound: the engine's own work is in the span too. Only for one request at a time,
    // where no other request's engine shares the span.
    r.h2d_gbps = gbps(r.input_bytes, r.compute_us);
    // A small output (reduce's 4 KB) is written in the span's last microseconds: no rate there.
    if (r.output_bytes >= r.input_bytes / 4) r.d2h_gbps = gbps(r.output_bytes, r.compute_us);
  }
  r.output_checked = s.checked;
  r.output_matches = s.checked && s.all_match;
  r.check_detail = s.all_match ? fmt::format("{} elements compared with the device reference", s.compared)
                               : s.mismatch;
}

void add_io_bytes(const std::vector<tensor_spec>& io, strategy_result& r) {
  for (const auto& t : io) (t.role == tensor_role::input ? r.input_bytes : r.output_bytes) += t.bytes();
}

// One GPU: one session and its reference, as ferry has always measured.
void run_on_one_gpu(const workload& w, strategy_kind strategy, const run_options& options, strategy_result& r) {
  const int device = options.devices.front();
  const device_caps caps = query_device(device);
  std::unique_ptr<engine> eng;
  {
    memory::scoped_device on_device(device);
    eng = w.make_engine(device);
  }
  const auto io = eng->resolve(w.shapes);
  add_io_bytes(io, r);
  if (auto reason = unavailable_reason(strategy, caps)) {
    r.refused = *reason;
    return;
  }

  session measured(*eng, io, {strategy, options.inflight, options.graph, options.managed_policy}, caps);
  if (options.graph == graph_mode::on && !measured.graph().active) {
    r.graph = false;
    r.notes.push_back(measured.graph().reason);
  }
  session reference(*eng, io, {strategy_kind::device, 1, graph_mode::off, oversubscription::refuse}, caps);
  if (options.warmup) {
    // The measured session last, so nothing else runs between its warm-up and its first request.
    reference.warmup();
    measured.warmup();
  }
  measure(single_session_target(measured, reference, device), strategy, options, r);
  // The bare baseline is one request at a time; it says nothing about queued or shared runs.
  if (strategy == strategy_kind::device && options.clients == 1 && options.inflight == 1) {
    memory::scoped_device on_device(device);
    const overhead_pair pair = paired_overhead(*eng, io, caps, measured, options.writes);
    r.notes.push_back(fmt::format("bare engine enqueue + stream sync: {:.1f} µs median, a device-strategy request "
                                  "{:.1f} µs, alternating over 100 pairs; ferry's overhead on the device strategy: "
                                  "{:+.1f} µs",
                                  pair.bare_us, pair.session_us, pair.session_us - pair.bare_us));
  }
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
  replica_set measured(caps, w.make_engine, w.shapes,
                       {strategy, options.inflight, options.graph, options.managed_policy});
  add_io_bytes(measured.io(), r);
  for (std::size_t i = 0; i < measured.size(); ++i) {
    if (options.graph == graph_mode::on && !measured.replica(i).graph().active) {
      r.graph = false;
      r.notes.push_back(fmt::format("GPU {}: {}", caps[i].ordinal, measured.replica(i).graph().reason));
    }
  }
  std::vector<std::unique_ptr<session>> references;
  cell_target target{.acquire = [&measured] { return measured.acquire(); },
                     .acquire_on = [&measured](int d) { return measured.acquire_on(d); },
                     .devices = options.devices,
                     .total_slots = options.inflight * static_cast<int>(measured.size()),
                     .strategy = strategy,
                     .references = {},
                     .request_bytes = io_bytes(measured.io())};
  for (std::size_t i = 0; i < measured.size(); ++i) {
    references.push_back(std::make_unique<session>(
        measured.engine_of(i), measured.io(),
        session_options{strategy_kind::device, 1, graph_mode::off, oversubscription::refuse}, caps[i]));
    target.references.emplace(caps[i].ordinal, references.back().get());
  }
  if (options.warmup) {
    for (auto& ref : references) ref->warmup();
    measured.warmup();
  }
  const auto before = measured.acquisitions();
  measure(target, strategy, options, r);
  // How the load was spread: each GPU's share of the requests (warm-ups and checks excluded).
  const auto after = measured.acquisitions();
  std::string shares;
  for (std::size_t i = 0; i < after.size(); ++i)
    shares += fmt::format("{}GPU {}: {}", i ? ", " : "", caps[i].ordinal, after[i] - before[i]);
  r.notes.push_back("requests per GPU: " + shares);
}

}  // namespace

strategy_result run_cell(const workload& w, strategy_kind strategy, const run_options& options) {
  strategy_result r;
  r.strategy = std::string(to_string(strategy));
  r.engine = w.label;
  r.inflight = options.inflight;
  r.clients = options.clients;
  r.devices = options.devices;
  r.graph = options.graph == graph_mode::on;
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

}  // namespace ferry::bench
