// The placement probe: one request at a time on device buffers, with its data on one GPU and the
// engine on the same or another GPU (placement_cost.hpp).
#include "ferry/bench/placement_cost.hpp"

#include <array>
#include <vector>

#include "bench/measure/input_fill.hpp"
#include "bench/measure/output_check.hpp"
#include "core/device_memory.hpp"
#include "core/scoped_device.hpp"
#include "ferry/bench/stats.hpp"
#include "ferry/core/error.hpp"
#include "ferry/core/stream.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/device/peer_access.hpp"

namespace ferry::bench {

namespace {

constexpr int warmup_requests = 10;

core::device_memory allocate_on(int device, std::size_t bytes) {
  core::scoped_device on_device(device);
  return core::allocate_device(bytes);
}

// One tensor's buffer where the data lives, and (remote runs) its counterpart on the running GPU.
struct tensor_buffers {
  const tensor_spec* spec;
  core::device_memory at_data;
  core::device_memory at_run;  // empty when the run is local
  [[nodiscard]] void* bound() const { return at_run.get() != nullptr ? at_run.get() : at_data.get(); }
};

std::vector<std::byte> download(const core::device_memory& m, int device) {
  core::scoped_device on_device(device);
  std::vector<std::byte> host(m.size());
  FERRY_CUDA_TRY(cudaMemcpy(host.data(), m.get(), m.size(), cudaMemcpyDeviceToHost));
  return host;
}

}  // namespace

placement_cost measure_placement_cost(const workload& w, int data_device, int run_device, int iterations) {
  if (iterations < 1) throw invalid_argument("placement cost: iterations must be at least 1");
  (void)query_device(data_device);
  (void)query_device(run_device);
  const bool remote = data_device != run_device;
  if (remote) (void)enable_peer_access(std::array{data_device, run_device});

  std::unique_ptr<engine> eng;
  {
    core::scoped_device on_run(run_device);
    eng = w.make_engine(run_device);
  }
  const auto io = eng->resolve(w.shapes);
  placement_cost result;
  result.engine = w.label;
  result.data_device = data_device;
  result.run_device = run_device;

  // The data: fresh inputs written once to the data GPU (outside any timing), as a client's CUDA
  // shared memory would hold them; output buffers there too.
  std::vector<tensor_buffers> inputs, outputs;
  for (const auto& t : io) {
    tensor_buffers b{&t, allocate_on(data_device, t.bytes()),
                     remote ? allocate_on(run_device, t.bytes()) : core::device_memory{}};
    if (t.role == tensor_role::input) {
      result.input_bytes += t.bytes();
      std::vector<std::byte> host(t.bytes());
      // No run_options here; streaming as bench's default (untimed, so it changes no figure).
      fill_fresh(host, t, 4242 + inputs.size(), input_writes::streaming, input_data{});
      core::scoped_device on_data(data_device);
      FERRY_CUDA_TRY(cudaMemcpy(b.at_data.get(), host.data(), host.size(), cudaMemcpyHostToDevice));
      inputs.push_back(std::move(b));
    } else {
      result.output_bytes += t.bytes();
      outputs.push_back(std::move(b));
    }
  }

  core::scoped_device on_run(run_device);
  auto context = eng->make_context(io);
  for (const auto& b : inputs) context->bind(b.spec->name, b.bound());
  for (const auto& b : outputs) context->bind(b.spec->name, b.bound());
  const stream s;
  event start(event_timing::enabled), inputs_in(event_timing::enabled), computed(event_timing::enabled),
      stop(event_timing::enabled);
  std::vector<double> total, peer_in, compute, peer_out;
  for (int i = 0; i < warmup_requests + iterations; ++i) {
    start.record(s);
    for (const auto& b : inputs)
      if (remote)
        FERRY_CUDA_TRY(
            cudaMemcpyPeerAsync(b.at_run.get(), run_device, b.at_data.get(), data_device, b.at_data.size(), s.get()));
    inputs_in.record(s);
    context->enqueue(s);
    computed.record(s);
    for (const auto& b : outputs)
      if (remote)
        FERRY_CUDA_TRY(
            cudaMemcpyPeerAsync(b.at_data.get(), data_device, b.at_run.get(), run_device, b.at_run.size(), s.get()));
    stop.record(s);
    stop.synchronize_blocking();
    if (i < warmup_requests) continue;
    total.push_back(elapsed_ms(start, stop) * 1e3);
    peer_in.push_back(elapsed_ms(start, inputs_in) * 1e3);
    compute.push_back(elapsed_ms(inputs_in, computed) * 1e3);
    peer_out.push_back(elapsed_ms(computed, stop) * 1e3);
  }
  result.total_us = summarize(total);
  result.compute_us = summarize(compute);
  if (remote) {
    result.peer_in_us = summarize(peer_in);
    result.peer_out_us = summarize(peer_out);
  }

  // The outputs now on the data GPU must be what the engine computes there on the same inputs.
  auto local_engine = [&] {
    core::scoped_device on_data(data_device);
    return w.make_engine(data_device);
  }();
  std::vector<core::device_memory> expected;
  {
    core::scoped_device on_data(data_device);
    auto local = local_engine->make_context(io);
    for (const auto& b : inputs) local->bind(b.spec->name, b.at_data.get());
    for (const auto& b : outputs) {
      expected.push_back(core::allocate_device(b.at_data.size()));
      local->bind(b.spec->name, expected.back().get());
    }
    const stream local_stream;
    local->enqueue(local_stream);
    local_stream.synchronize_blocking();
  }
  result.outputs_match = true;
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const auto got = download(outputs[o].at_data, data_device);
    const auto want = download(expected[o], data_device);
    const auto outcome = compare_output(got, want, *outputs[o].spec);
    if (!outcome.matches) {
      result.outputs_match = false;
      result.check_detail = outcome.first_mismatch;
      break;
    }
  }
  return result;
}

}  // namespace ferry::bench
