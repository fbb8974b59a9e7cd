#include "bench/measure/client_loop.hpp"

#include <barrier>
#include <thread>

#include <nvtx3/nvtx3.hpp>

#include "bench/measure/gpu_delay.hpp"
#include "bench/measure/host_probe.hpp"
#include "bench/measure/input_fill.hpp"

namespace ferry::bench {

client_loop::client_loop(const cell_target& target, const run_options& options, output_checks& checks,
                         const stopping_criterion& stop)
    : target_(target),
      options_(options),
      checks_(checks),
      stop_rule_(stop),
      resident_(properties(target.strategy).path == data_path::resident) {}

void client_loop::run() {
  // The clock starts once every client thread exists and, with warm-up, has run untimed requests
  // of its own until their latency settled (warm_up): engines keep per-thread state (libtorch
  // makes a cuDNN and a cuBLAS handle per host thread, ~50 ms on the H200 host), which a
  // long-lived server thread pays once, not on a measured request. The last client to finish its
  // warm-up completes the barrier and starts at once, so no gap lets the CPU or GPU idle down.
  std::barrier ready(options_.clients, [this]() noexcept {
    samples_.start = bench_clock::now();
    samples_.last_done = samples_.start;
  });
  // The host probe before and after the clients run: timing it between requests would put it
  // inside some other client's request.
  samples_.host_probe.push_back(time_host_probe_us());
  samples_.cuda_probe.push_back(time_cuda_probe_us());
  if (const double gbps = time_host_copy_gbps(); gbps > 0) samples_.host_copy.push_back(gbps);
  const start_line start{.wait = [&ready] { ready.arrive_and_wait(); }, .leave = [&ready] { ready.arrive_and_drop(); }};
  std::vector<std::thread> clients;
  for (int c = 1; c < options_.clients; ++c) clients.emplace_back([this, &start] { run_client(start); });
  run_client(start);
  for (auto& t : clients) t.join();
  samples_.host_probe.push_back(time_host_probe_us());
  samples_.cuda_probe.push_back(time_cuda_probe_us());
  if (const double gbps = time_host_copy_gbps(); gbps > 0) samples_.host_copy.push_back(gbps);
  if (error_) std::rethrow_exception(error_);
}

// A client inside the cell's boundary: an exception on a client thread would end the process.
void client_loop::run_client(const start_line& start) {
  bool started = false;
  const start_line marked{.wait =
                              [&] {
                                started = true;
                                start.wait();
                              },
                          .leave = start.leave};
  try {
    client(marked);
  } catch (...) {
    {
      std::lock_guard lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
    stop_ = true;
    if (!started) start.leave();
  }
}

void client_loop::client(const start_line& start) {
  if (options_.warmup) warm_up();
  start.wait();
  // Requests still in flight when a request throws are waited for as the queue unwinds (a
  // pending slot's destructor waits for its work).
  std::deque<in_flight> queue;
  while (!stop_.load(std::memory_order_relaxed)) {
    queue.push_back(start_request(target_.acquire(), next_.fetch_add(1)));
    if (queue.size() >= depth()) {
      (void)finish_request(std::move(queue.front()));
      queue.pop_front();
    }
  }
  for (auto& r : queue) (void)finish_request(std::move(r));
}

// Slots of every GPU together, shared out among the clients (one GPU: inflight / clients).
std::size_t client_loop::depth() const {
  return static_cast<std::size_t>(std::max(1, target_.total_slots / options_.clients));
}

// Untimed requests through the very code of the timed ones (fresh input, output read, the same
// functions, so their instructions and allocations are warm too), until the latency has settled,
// on every GPU (a client thread may be handed a slot of any of them). One warm-up request was not
// enough: after it, the first timed request was still over 1.1x the median in 12 of 80 cells, up
// to 2.4x for managed-prefetch, whose pages and the driver's migration heuristics take several
// round trips to settle. The rule asks for the level to have stopped moving, not for the last
// request to have been fast, so the clock does not start on a lucky sample.
void client_loop::warm_up() {
  nvtx3::scoped_range range{"ferry.client_warmup"};
  const settling_rule& settled = options_.warmup_rule;
  for (const int device : target_.devices) {
    std::vector<double> latencies;
    std::deque<in_flight> queue;
    const auto begin = bench_clock::now();
    while (!settled.should_stop(latencies, std::chrono::duration<double>(bench_clock::now() - begin).count())) {
      queue.push_back(start_request(target_.acquire_on(device), std::nullopt));
      if (queue.size() >= depth()) {
        latencies.push_back(finish_request(std::move(queue.front())));
        queue.pop_front();
      }
    }
    for (auto& r : queue) (void)finish_request(std::move(r));
  }
}

client_loop::in_flight client_loop::start_request(filling_slot filling, std::optional<std::uint64_t> seq) {
  nvtx3::scoped_range range{"ferry.fill_and_submit"};
  const auto fill_start = bench_clock::now();
  const std::uint64_t seed = seq ? *seq * 131 : ~std::uint64_t{0} - 97 * warmups_.fetch_add(1);
  for (std::size_t i = 0; i < filling.input_count(); ++i)
    fill_fresh(filling.input(i), filling.input_spec(i), seed, options_.writes, options_.data);
  const auto fill_end = bench_clock::now();
  filling.upload_resident_inputs();
  byte_copies inputs;
  if (checks_.reserve(seq))
    for (std::size_t i = 0; i < filling.input_count(); ++i)
      inputs.emplace_back(filling.input(i).begin(), filling.input(i).end());
  const auto submitted = bench_clock::now();
  return {std::move(filling).submit(), seq, submitted, micros(fill_end - fill_start), std::move(inputs)};
}

// Returns the request's latency; only timed requests are recorded.
double client_loop::finish_request(in_flight r) {
  nvtx3::scoped_range range{"ferry.wait_and_read"};
  auto done = std::move(r.pending).wait();
  // The device strategy's outputs stay on the device by definition: there is nothing on the host
  // to read, and reading its stale shadow would put host work into the floor.
  if (!resident_)
    for (std::size_t i = 0; i < done.output_count(); ++i) sink_ += read_every_byte(done.output(i));
  const double delayed_us = target_.delay != nullptr ? target_.delay->delay_us() : 0;
  const auto readable = stretched(r.submitted, bench_clock::now(), options_.slowdown, delayed_us);
  const stage_times times = done.times();
  if (target_.delay != nullptr && times.total_ms > 0) target_.delay->observe(times.total_ms * 1e3);
  const bool check = !r.inputs.empty();
  const int device = done.ordinal();
  byte_copies outputs;
  if (check) {
    done.download_resident_outputs();
    for (std::size_t i = 0; i < done.output_count(); ++i)
      outputs.emplace_back(done.output(i).begin(), done.output(i).end());
  }
  { auto release = std::move(done); }  // the slot goes back before anything else happens
  const double latency_us = micros(readable - r.submitted);
  if (r.seq) record(*r.seq, latency_us, r.fill_us, times, readable);
  if (check) checks_.keep(device, std::move(r.inputs), std::move(outputs), samples_.checks);
  return latency_us;
}

void client_loop::record(std::uint64_t seq, double latency_us, double fill_us, const stage_times& t,
                         bench_clock::time_point done_at) {
  std::lock_guard lock(record_mutex_);
  ++samples_.requests;
  samples_.last_done = std::max(samples_.last_done, done_at);
  samples_.completed_at.push_back(std::chrono::duration<double>(done_at - samples_.start).count());
  if (seq == 0) {
    samples_.cold_first = latency_us;
    return;
  }
  samples_.latency.push_back(latency_us);
  samples_.fill.push_back(fill_us);
  samples_.gpu.push_back(t.total_ms * 1e3);
  if (t.h2d_ms) samples_.h2d.push_back(*t.h2d_ms * 1e3);
  samples_.compute.push_back(t.compute_ms ? *t.compute_ms * 1e3 : t.total_ms * 1e3);
  if (t.d2h_ms) samples_.d2h.push_back(*t.d2h_ms * 1e3);
  samples_.enqueue.push_back(t.enqueue_us);
  // The criterion costs O(n log n); past a few hundred samples, asking it every ~5% of them keeps
  // it out of the way (a time cap is then overshot by at most ~5%).
  const std::size_t n = samples_.latency.size();
  if (n >= 200 && n % (n / 20) != 0) return;
  const double elapsed = std::chrono::duration<double>(bench_clock::now() - samples_.start).count();
  const std::span<const double> series[] = {stop_rule_.reads_completion_times() ? samples_.completed_at
                                                                                : samples_.latency};
  const stop_decision decision = stop_rule_.decide(series, elapsed);
  if (decision != stop_decision::keep_going) {
    samples_.stopped = decision;
    stop_ = true;
  }
}

}  // namespace ferry::bench
