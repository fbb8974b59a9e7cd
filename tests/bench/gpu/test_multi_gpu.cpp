// Several GPUs: replicas compute correctly on each GPU, every request of many clients is
// answered once with its own data while both GPUs work, data-following placement runs where it
// is asked to, managed pages end on their own GPU, peer access is reported and enabled. Tests
// that need two GPUs skip, saying so, on a host with one.
#include <gtest/gtest.h>

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/measure/cell_runner.hpp"
#include "bench/measure/input_fill.hpp"
#include "core/device_memory.hpp"
#include "core/managed_memory.hpp"
#include "core/pinned_memory.hpp"
#include "core/scoped_device.hpp"
#include "ferry/bench/placement_cost.hpp"
#include "ferry/bench/run_options.hpp"
#include "ferry/bench/workload_factory.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/device/peer_access.hpp"
#include "ferry/engines/builtin.hpp"
#include "ferry/memory/data_location.hpp"
#include "ferry/session/replica_set.hpp"
#include "ferry/session/session.hpp"

namespace {

using ferry::strategy_kind;

// Skips the calling test unless the host has `needed` GPUs.
#define FERRY_REQUIRE_GPUS(needed)                                                            \
  do {                                                                                        \
    const int found_ = ferry::cuda_device_count();                                            \
    if (found_ < (needed)) GTEST_SKIP() << "needs " << (needed) << " GPUs, found " << found_; \
  } while (0)

std::vector<ferry::device_caps> first_gpus(int n) {
  std::vector<ferry::device_caps> caps;
  for (int d = 0; d < n; ++d) caps.push_back(ferry::query_device(d));
  return caps;
}

ferry::engine_factory builtin_factory(std::string spec, ferry::builtin_options options) {
  return [spec, options](int) -> std::unique_ptr<ferry::engine> { return ferry::make_builtin_engine(spec, options); };
}

// The GPU's output against the CPU reference: touch bit-exactly, mlp within its documented
// tolerance (2e-2 of max(|ref|, rms(ref))). Returns "" when it matches, else the first mismatch.
std::string compare_with_host(const ferry::host_reference_engine& reference, const std::vector<ferry::tensor_spec>& io,
                              const std::vector<std::vector<std::byte>>& inputs, const ferry::completed_slot& done) {
  std::vector<std::vector<std::byte>> expected;
  for (const auto& t : io)
    if (t.role == ferry::tensor_role::output) expected.emplace_back(t.bytes());
  std::vector<std::span<const std::byte>> in(inputs.begin(), inputs.end());
  std::vector<std::span<std::byte>> out(expected.begin(), expected.end());
  reference.run_on_host(in, out);
  for (std::size_t o = 0; o < expected.size(); ++o) {
    const auto got = done.output(o);
    const auto& spec = done.output_spec(o);
    if (spec.type == ferry::dtype::f32) {
      if (std::memcmp(got.data(), expected[o].data(), got.size()) != 0) return "output " + spec.name + " differs";
      continue;
    }
    const auto* g = reinterpret_cast<const __half*>(got.data());
    const auto* e = reinterpret_cast<const __half*>(expected[o].data());
    const std::size_t n = got.size() / sizeof(__half);
    double sum_sq = 0;
    for (std::size_t i = 0; i < n; ++i) sum_sq += std::pow(static_cast<double>(__half2float(e[i])), 2);
    const double rms = std::sqrt(sum_sq / static_cast<double>(n));
    for (std::size_t i = 0; i < n; ++i) {
      const double want = __half2float(e[i]);
      const double have = __half2float(g[i]);
      if (std::abs(have - want) > 2e-2 * std::max(std::abs(want), rms))
        return spec.name + "[" + std::to_string(i) + "]: " + std::to_string(have) + " vs " + std::to_string(want);
    }
  }
  return {};
}

struct replica_case {
  const char* spec;
  strategy_kind strategy;
};

class ReplicasMatchTheCpu : public ::testing::TestWithParam<replica_case> {};

// Each replica, reached with acquire_on, runs on its own GPU and reproduces the CPU reference.
TEST_P(ReplicasMatchTheCpu, OnEveryGpu) {
  FERRY_REQUIRE_GPUS(2);
  const auto [spec, strategy] = GetParam();
  const ferry::builtin_options options{.input_bytes = std::size_t{4} << 20, .batch = 64};
  const auto reference = ferry::make_builtin_engine(spec, options);
  const auto gpus = first_gpus(ferry::cuda_device_count());
  ferry::replica_set set(gpus, builtin_factory(spec, options), {}, {.strategy = strategy, .inflight = 2});
  set.warmup(1);
  for (const int device : set.devices()) {
    for (int round = 0; round < 3; ++round) {
      auto filling = set.acquire_on(device);
      ASSERT_EQ(filling.ordinal(), device);
      std::vector<std::vector<std::byte>> inputs;
      for (std::size_t i = 0; i < filling.input_count(); ++i) {
        ferry::bench::fill_fresh(filling.input(i), filling.input_spec(i), 1000 * device + round * 10 + i,
                                 ferry::bench::input_writes::streaming, ferry::input_data{});
        inputs.emplace_back(filling.input(i).begin(), filling.input(i).end());
      }
      filling.upload_resident_inputs();
      auto done = std::move(filling).submit().wait();
      done.download_resident_outputs();
      EXPECT_EQ(done.ordinal(), device);
      const std::string mismatch = compare_with_host(*reference, set.io(), inputs, done);
      EXPECT_TRUE(mismatch.empty()) << spec << " on GPU " << device << ", round " << round << ": " << mismatch;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Builtins, ReplicasMatchTheCpu,
    ::testing::Values(replica_case{"touch", strategy_kind::pinned}, replica_case{"touch", strategy_kind::mapped},
                      replica_case{"touch", strategy_kind::managed_prefetch},
                      replica_case{"touch", strategy_kind::device}, replica_case{"mlp:4x512", strategy_kind::pinned},
                      replica_case{"mlp:4x512", strategy_kind::registered}),
    [](const auto& info) {
      std::string name = std::string(info.param.spec) + "_" + std::string(ferry::to_string(info.param.strategy));
      std::replace_if(
          name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
      return name;
    });

// Many clients, many requests each, every one tagged with a value unique to it: each answer must
// be its own (touch computes 2x+1), exactly once, and both GPUs must have taken a share.
TEST(MultiGpu, EveryRequestIsAnsweredOnceWithItsOwnDataAcrossGpus) {
  FERRY_REQUIRE_GPUS(2);
  const auto gpus = first_gpus(ferry::cuda_device_count());
  ferry::replica_set set(gpus, builtin_factory("touch", {.input_bytes = std::size_t{1} << 20}), {},
                         {.strategy = strategy_kind::pinned, .inflight = 3});
  set.warmup(1);
  const auto before = set.acquisitions();
  constexpr int clients = 12;
  constexpr int requests = 40;
  std::atomic<int> wrong{0};
  std::mutex seen_mutex;
  std::vector<int> answers(clients * requests, 0);
  std::vector<int> per_device(64, 0);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      for (int r = 0; r < requests; ++r) {
        const int id = c * requests + r;
        auto filling = set.acquire();
        auto* values = reinterpret_cast<float*>(filling.input(0).data());
        const std::size_t n = filling.input(0).size() / sizeof(float);
        for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<float>(id) + static_cast<float>(i % 5);
        auto done = std::move(filling).submit().wait();
        const auto* out = reinterpret_cast<const float*>(done.output(0).data());
        bool own = true;
        for (std::size_t i = 0; i < n && own; ++i)
          own = out[i] == (static_cast<float>(id) + static_cast<float>(i % 5)) * 2.0F + 1.0F;
        if (!own) ++wrong;
        std::lock_guard lock(seen_mutex);
        ++answers[static_cast<std::size_t>(id)];
        ++per_device[static_cast<std::size_t>(done.ordinal())];
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0) << "requests got another request's data";
  EXPECT_TRUE(std::all_of(answers.begin(), answers.end(), [](int n) { return n == 1; }));
  const auto after = set.acquisitions();
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < set.size(); ++i) {
    const auto share = after[i] - before[i];
    total += share;
    EXPECT_EQ(share, static_cast<std::uint64_t>(per_device[static_cast<std::size_t>(set.devices()[i])]));
    // Twelve clients on three slots per GPU keep every GPU busy: each must take a real share.
    EXPECT_GT(share, static_cast<std::uint64_t>(clients * requests / (4 * static_cast<int>(set.size()))))
        << "GPU " << set.devices()[i] << " took " << share << " of " << clients * requests;
  }
  EXPECT_EQ(total, static_cast<std::uint64_t>(clients * requests));
}

// Data-following placement: with a free slot on the GPU asked for, the request runs there even
// when the other GPU is idler.
TEST(MultiGpu, AcquireOnRunsOnTheDeviceAskedFor) {
  FERRY_REQUIRE_GPUS(2);
  const auto gpus = first_gpus(2);
  ferry::replica_set set(gpus, builtin_factory("touch", {.input_bytes = std::size_t{1} << 20}), {},
                         {.strategy = strategy_kind::pinned, .inflight = 2});
  auto held = set.acquire_on(1);  // GPU 1 busier than GPU 0 from now on
  auto filling = set.acquire_on(1);
  EXPECT_EQ(filling.ordinal(), 1);
  EXPECT_EQ(held.ordinal(), 1);
  // GPU 1 is now full and GPU 0 idle: the rule sends the next request to GPU 0.
  auto spilled = set.acquire_on(1);
  EXPECT_EQ(spilled.ordinal(), 0);
  auto done = std::move(filling).submit().wait();
  EXPECT_EQ(done.ordinal(), 1);
  EXPECT_THROW((void)set.acquire_on(7), ferry::invalid_argument);
  // The set turned peer access on between its GPUs wherever the topology allows it.
  ASSERT_EQ(set.peer_links().size(), 2U);
  for (const auto& link : set.peer_links()) EXPECT_EQ(link.enabled, link.can_access) << link.error;
}

// Managed-prefetch buffers of the replica on GPU d end up on GPU d, not on device 0.
TEST(MultiGpu, ManagedPagesArePrefetchedToTheirOwnGpu) {
  FERRY_REQUIRE_GPUS(2);
  for (const int device : {0, 1}) {
    const auto caps = ferry::query_device(device);
    if (auto reason = ferry::unavailable_reason(strategy_kind::managed_prefetch, caps)) GTEST_SKIP() << *reason;
    auto buffer = ferry::io_buffer::allocate(strategy_kind::managed_prefetch,
                                             {.bytes = std::size_t{4} << 20, .dir = ferry::direction::input}, caps);
    std::memset(buffer.host().data(), 1, buffer.bytes());
    ferry::core::scoped_device on_device(device);
    ferry::stream s;
    buffer.to_device(s);
    s.synchronize_blocking();
    int location = -3;
    FERRY_CUDA_TRY(cudaMemRangeGetAttribute(&location, sizeof(location), cudaMemRangeAttributeLastPrefetchLocation,
                                            buffer.device_address(), buffer.bytes()));
    EXPECT_EQ(location, device) << "managed buffer of GPU " << device << " was prefetched to " << location;
    EXPECT_EQ(buffer.device_ordinal(), device);
  }
}

// Pinned and mapped host memory is portable: page-locked for every GPU, not just the one current
// when it was allocated. Runs on one GPU too (the flag is what matters).
TEST(MultiGpu, PinnedAndMappedHostMemoryIsPortable) {
  const auto caps = ferry::query_device(ferry::cuda_device_count() - 1);
  for (const auto strategy : {strategy_kind::pinned, strategy_kind::mapped, strategy_kind::staged}) {
    if (ferry::unavailable_reason(strategy, caps)) continue;
    auto buffer = ferry::io_buffer::allocate(strategy, {.bytes = std::size_t{1} << 20}, caps);
    if (strategy == strategy_kind::staged) continue;  // its host view is pageable by design
    unsigned int flags = 0;
    FERRY_CUDA_TRY(cudaHostGetFlags(&flags, buffer.host().data()));
    EXPECT_NE(flags & cudaHostAllocPortable, 0U) << ferry::to_string(strategy) << " flags " << flags;
  }
}

// Every ordered pair is reported; where the topology allows it access ends up enabled, and a
// second call (already enabled) is not an error.
TEST(MultiGpu, PeerAccessIsReportedAndEnabledIdempotently) {
  FERRY_REQUIRE_GPUS(2);
  const std::vector<int> devices{0, 1};
  for (int call = 0; call < 2; ++call) {
    const auto links = ferry::enable_peer_access(devices);
    ASSERT_EQ(links.size(), 2U);
    for (const auto& link : links) {
      EXPECT_NE(link.from, link.to);
      int can = -1;
      FERRY_CUDA_TRY(cudaDeviceCanAccessPeer(&can, link.from, link.to));
      EXPECT_EQ(link.can_access, can != 0);
      EXPECT_EQ(link.enabled, link.can_access) << "call " << call << ": " << link.error;
      EXPECT_TRUE(link.error.empty()) << link.error;
    }
  }
  const auto bw = ferry::measure_peer_bandwidth_blocking(0, 1, {.bytes = std::size_t{64} << 20, .repetitions = 3});
  EXPECT_GT(bw.gbps_median, 1.0);
  EXPECT_GE(bw.gbps_best, bw.gbps_median);
  EXPECT_THROW((void)ferry::measure_peer_bandwidth_blocking(0, 0), ferry::invalid_argument);
}

// Where data lives, as the driver reports it: device memory on its GPU, managed pages where they
// were prefetched, host memory on none; acquire_for follows it.
TEST(MultiGpu, DataLocationFindsTheGpuHoldingTheInput) {
  FERRY_REQUIRE_GPUS(2);
  const std::size_t bytes = std::size_t{1} << 20;
  const auto on_one = [&] {
    ferry::core::scoped_device on_device(1);
    return ferry::core::allocate_device(bytes);
  }();
  EXPECT_EQ(ferry::gpu_holding(on_one.get(), bytes), 1);
  const auto pinned = ferry::core::allocate_pinned(bytes, cudaHostAllocPortable);
  EXPECT_FALSE(ferry::gpu_holding(pinned.get(), bytes).has_value());
  std::vector<std::byte> pageable(bytes);
  EXPECT_FALSE(ferry::gpu_holding(pageable.data(), bytes).has_value());
  const auto managed = ferry::core::allocate_managed(bytes);
  cudaMemLocation gpu1{};
  gpu1.type = cudaMemLocationTypeDevice;
  gpu1.id = 1;
  {
    ferry::core::scoped_device on_device(1);
    FERRY_CUDA_TRY(cudaMemPrefetchAsync(managed.get(), bytes, gpu1, 0, nullptr));
    FERRY_CUDA_TRY(cudaDeviceSynchronize());
  }
  EXPECT_EQ(ferry::gpu_holding(managed.get(), bytes), 1);

  const auto gpus = first_gpus(2);
  ferry::replica_set set(gpus, builtin_factory("touch", {.input_bytes = bytes}), {},
                         {.strategy = strategy_kind::pinned, .inflight = 2});
  auto follows = set.acquire_for(on_one.get(), bytes);
  EXPECT_EQ(follows.ordinal(), 1);
  auto also = set.acquire_for(managed.get(), bytes);
  EXPECT_EQ(also.ordinal(), 1);
  // Host data is on no GPU: the least-loaded one (GPU 0, idle) takes it.
  auto anywhere = set.acquire_for(pinned.get(), bytes);
  EXPECT_EQ(anywhere.ordinal(), 0);
}

// The placement probe: run where the data is, or away from it through peer copies. Both give the
// engine's answer; only the remote run pays for peer copies, so it is slower.
TEST(MultiGpu, RunningAwayFromTheDataCostsPeerCopies) {
  FERRY_REQUIRE_GPUS(2);
  ferry::bench::workload_request request;
  request.engine = "touch";
  request.input_bytes = std::size_t{32} << 20;
  const auto w = ferry::bench::make_workload(request);
  const auto local = ferry::bench::measure_placement_cost(w, 1, 1, 30);
  const auto away = ferry::bench::measure_placement_cost(w, 1, 0, 30);
  EXPECT_TRUE(local.outputs_match) << local.check_detail;
  EXPECT_TRUE(away.outputs_match) << away.check_detail;
  EXPECT_FALSE(local.peer_in_us.has_value());
  ASSERT_TRUE(away.peer_in_us.has_value());
  ASSERT_TRUE(away.peer_out_us.has_value());
  // 32 MB each way over any GPU link takes far longer than touch's pass over 32 MB in HBM.
  EXPECT_GT(away.total_us.median, local.total_us.median)
      << "local " << local.total_us.median << " µs, away " << away.total_us.median << " µs";
  std::cout << "[ placement ] touch 32 MB, data on GPU 1: local " << local.total_us.median << " µs, on GPU 0 "
            << away.total_us.median << " µs (peer in " << away.peer_in_us->median << ", out "
            << away.peer_out_us->median << ")\n";
}

// `ferry bench --devices 0,1`: one cell spread over both GPUs, every checked output matching the
// reference on its own GPU, both GPUs taking requests.
TEST(MultiGpu, BenchCellSpreadsOverBothGpusAndChecksEachOnItsOwn) {
  FERRY_REQUIRE_GPUS(2);
  ferry::bench::workload_request request;
  request.engine = "mlp:4x512";
  request.batch = 64;
  request.devices = {0, 1};
  const auto w = ferry::bench::make_workload(request);
  for (const auto strategy : {strategy_kind::pinned, strategy_kind::managed_prefetch, strategy_kind::device}) {
    ferry::bench::run_options options;
    options.devices = {0, 1};
    options.session.inflight = 2;
    options.clients = 4;
    options.iterations = 300;
    options.check_every = 8;
    options.um_counters = false;
    const auto r = ferry::bench::run_cell(w, strategy, options);
    ASSERT_TRUE(r.verdict.measured()) << r.verdict.reason();
    EXPECT_EQ(r.identity.devices, (std::vector<int>{0, 1}));
    EXPECT_TRUE(r.verdict.output_checked);
    EXPECT_TRUE(r.verdict.output_matches) << r.verdict.check_detail;
    const auto note = std::find_if(r.diagnostics.notes.begin(), r.diagnostics.notes.end(),
                                   [](const std::string& n) { return n.starts_with("requests per GPU"); });
    ASSERT_NE(note, r.diagnostics.notes.end());
    EXPECT_EQ(note->find(": 0,"), std::string::npos) << *note;  // neither GPU idle
    EXPECT_FALSE(note->ends_with(": 0")) << *note;
  }
}

// One GPU that is not GPU 0: the single-session path with everything on GPU 1.
TEST(MultiGpu, BenchCellOnGpuOneAlone) {
  FERRY_REQUIRE_GPUS(2);
  ferry::bench::workload_request request;
  request.engine = "touch";
  request.input_bytes = std::size_t{4} << 20;
  request.devices = {1};
  const auto w = ferry::bench::make_workload(request);
  for (const auto strategy : {strategy_kind::pinned, strategy_kind::mapped, strategy_kind::managed_advise}) {
    ferry::bench::run_options options;
    options.devices = {1};
    options.session.inflight = 2;
    options.iterations = 100;
    options.check_every = 8;
    options.um_counters = false;
    const auto r = ferry::bench::run_cell(w, strategy, options);
    ASSERT_TRUE(r.verdict.measured()) << r.verdict.reason();
    EXPECT_TRUE(r.verdict.output_matches) << ferry::to_string(strategy) << ": " << r.verdict.check_detail;
  }
}

// A replica set on one GPU behaves like its session: every slot is that GPU's.
TEST(MultiGpu, OneGpuSetIsASession) {
  const auto gpus = first_gpus(1);
  ferry::replica_set set(gpus, builtin_factory("touch", {.input_bytes = std::size_t{1} << 20}), {},
                         {.strategy = strategy_kind::pinned, .inflight = 2});
  auto a = set.acquire();
  auto b = set.acquire();
  EXPECT_EQ(a.ordinal(), gpus[0].ordinal);
  EXPECT_EQ(b.ordinal(), gpus[0].ordinal);
  EXPECT_EQ(set.replica(0).slots_in_use(), 2);
}

}  // namespace
