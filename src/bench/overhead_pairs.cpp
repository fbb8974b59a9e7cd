#include "bench/overhead_pairs.hpp"

#include <chrono>

#include "bench/input_fill.hpp"
#include "ferry/bench_stats.hpp"
#include "ferry/buffer.hpp"
#include "ferry/stream.hpp"

namespace ferry::bench {
namespace {
using clock = std::chrono::steady_clock;
double micros(clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }
}  // namespace

// ferry's own overhead on the device strategy: the engine alone (enqueue on device-resident
// buffers and synchronise, no session, no events) against a device-strategy request of the
// measured session, alternating one of each, so both see the same GPU clocks and caches. Bare
// runs and the cell measured minutes apart differed by more than the overhead at 19-64 MB (the
// same kernel took 63.5 µs in one run and 76.6 µs in the next). Each iteration first puts fresh
// input on the device (untimed) on both sides, as the device strategy does.
overhead_pair paired_overhead(engine& eng, const std::vector<tensor_spec>& io, const device_caps& caps,
                              session& measured, input_writes writes) {
  auto context = eng.make_context(io);
  std::vector<io_buffer> inputs;
  std::vector<const tensor_spec*> input_specs;
  std::vector<io_buffer> outputs;
  for (const auto& t : io) {
    auto buffer = io_buffer::allocate(strategy_kind::device, {.bytes = t.bytes()}, caps);
    context->bind(t.name, buffer.device());
    if (t.role == tensor_role::input) {
      inputs.push_back(std::move(buffer));
      input_specs.push_back(&t);
    } else {
      outputs.push_back(std::move(buffer));
    }
  }
  stream s;
  const auto run_bare = [&](int i) {
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      fill_fresh(inputs[k].host(), *input_specs[k], 1000 + i, writes);
      inputs[k].upload_blocking(s);
    }
    const auto start = clock::now();
    context->enqueue(s);
    s.synchronize_blocking();
    return micros(clock::now() - start);
  };
  // The span the cell measures for the device strategy: submit to the completed request.
  const auto run_session = [&](int i) {
    filling_slot filling = measured.acquire();
    for (std::size_t k = 0; k < filling.input_count(); ++k)
      fill_fresh(filling.input(k), filling.input_spec(k), 5000 + i, writes);
    filling.stage_resident_inputs_untimed();
    const auto start = clock::now();
    const completed_slot done = std::move(filling).submit().wait();
    return micros(clock::now() - start);
  };
  std::vector<double> bare, through_session;
  for (int i = 0; i < 120; ++i) {
    // Which side goes first alternates, so neither always runs on the GPU state the other left.
    double bare_us = 0;
    double session_us = 0;
    if (i % 2 == 0) {
      bare_us = run_bare(i);
      session_us = run_session(i);
    } else {
      session_us = run_session(i);
      bare_us = run_bare(i);
    }
    if (i >= 20) {  // the first ones warm up
      bare.push_back(bare_us);
      through_session.push_back(session_us);
    }
  }
  return {median_of(bare), median_of(through_session)};
}

}  // namespace ferry::bench
