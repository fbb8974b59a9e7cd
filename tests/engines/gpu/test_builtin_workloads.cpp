// Built-in workloads on the GPU, each against its CPU reference (run_on_host): every output
// element, on fresh random input, twice (bit-identical repeats), on two contexts with two streams
// in flight at once, and replayed from a captured CUDA graph.
#include <gtest/gtest.h>

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/device_memory.hpp"
#include "ferry/core/error.hpp"
#include "ferry/core/stream.hpp"
#include "ferry/engines/builtin.hpp"

namespace {

using ferry::dtype;
using ferry::host_reference_engine;
using ferry::tensor_role;
using ferry::tensor_spec;

// How a workload's GPU output is compared with its CPU reference.
enum class comparison {
  exact,  // the same bits (element-wise maps)
  sums,   // fp32 sums in a different order: 1e-5 of the summed magnitudes
  mlp,    // fp16 GEMM chain: 2e-2 of max(|ref|, rms(ref))
};

struct workload_case {
  const char* label;
  const char* spec;
  ferry::builtin_options options;
  bool u8_images = false;
  ferry::normalize_options images{};
  comparison compare = comparison::exact;
  // For comparison::sums: how many values each output adds up, and their largest magnitude.
  double terms_per_output = 0.0;
  double largest_term = 1.0;
};

// Test names and failure messages show the label, not the struct's bytes.
void PrintTo(const workload_case& c, std::ostream* os) { *os << c.label; }

ferry::builtin_options sized(std::size_t input_bytes, std::int64_t batch = 16) {
  ferry::builtin_options options;
  options.input_bytes = input_bytes;
  options.batch = batch;
  return options;
}

ferry::normalize_options square_images(std::int64_t side) {
  ferry::normalize_options options;
  options.height = side;
  options.width = side;
  return options;
}

constexpr std::size_t default_bytes = std::size_t{19} << 20;
constexpr double default_floats = static_cast<double>(default_bytes / 4);
// Largest |(v / 255 - mean) / stddev| over v in [0, 255] with the ImageNet defaults.
constexpr double largest_normalized = 2.7;

std::unique_ptr<host_reference_engine> make_engine(const workload_case& c) {
  auto engine = ferry::make_builtin_engine(c.spec, c.options);
  if (c.u8_images) return ferry::with_u8_normalize(std::move(engine), c.images);
  return engine;
}

// splitmix64, so every run of the test sees the same "random" data.
class random_source {
 public:
  explicit random_source(std::uint64_t seed) : state_(seed * 0x2545F4914F6CDD1DULL + 7) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  float symmetric() {  // [-1, 1)
    return static_cast<float>(next() >> 40) * (2.0F / 16777216.0F) - 1.0F;
  }

 private:
  std::uint64_t state_;
};

// Fresh input for one tensor. Index tensors get valid page numbers, except the first and the
// last, which are out of range on purpose (the kernel must write NaN, not read past the table).
void fill_fresh(const tensor_spec& spec, std::vector<std::byte>& host, std::uint64_t seed) {
  random_source random(seed);
  const std::size_t n = spec.elements();
  switch (spec.type) {
    case dtype::f32: {
      auto* v = reinterpret_cast<float*>(host.data());
      for (std::size_t i = 0; i < n; ++i) v[i] = random.symmetric();
      return;
    }
    case dtype::f16: {
      auto* v = reinterpret_cast<__half*>(host.data());
      for (std::size_t i = 0; i < n; ++i) v[i] = __float2half_rn(random.symmetric());
      return;
    }
    case dtype::u8:
      for (auto& b : host) b = static_cast<std::byte>(random.next() >> 56);
      return;
    case dtype::i32: {
      ASSERT_TRUE(spec.index_bound.has_value()) << spec.name;
      const auto bound = static_cast<std::uint64_t>(*spec.index_bound);
      auto* v = reinterpret_cast<std::int32_t*>(host.data());
      for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::int32_t>(random.next() % bound);
      if (n >= 3) {
        v[0] = -1;
        v[n - 1] = static_cast<std::int32_t>(bound);
      }
      return;
    }
    default:
      FAIL() << "no filler for " << ferry::to_string(spec.type);
  }
}

// One context of an engine with device memory for every tensor and host copies of them.
class prepared_run {
 public:
  prepared_run(host_reference_engine& engine, const std::vector<tensor_spec>& concrete)
      : engine_(engine), io_(concrete), context_(engine.make_context(concrete)) {
    for (const auto& spec : io_) {
      host_.emplace_back(spec.bytes());
      device_.push_back(ferry::core::allocate_device(spec.bytes()));
      context_->bind(spec.name, device_.back().get());
    }
  }

  void fill_inputs(std::uint64_t seed) {
    for (std::size_t i = 0; i < io_.size(); ++i)
      if (io_[i].role == tensor_role::input) fill_fresh(io_[i], host_[i], seed * 31 + i);
  }

  // Inputs to the device; outputs poisoned with NaN bytes so an output the engine did not
  // write cannot pass as correct.
  void upload(ferry::stream_ref stream) {
    for (std::size_t i = 0; i < io_.size(); ++i) {
      if (io_[i].role == tensor_role::input)
        FERRY_CUDA_TRY(
            cudaMemcpyAsync(device_[i].get(), host_[i].data(), host_[i].size(), cudaMemcpyHostToDevice, stream.get()));
      else
        FERRY_CUDA_TRY(cudaMemsetAsync(device_[i].get(), 0xFF, host_[i].size(), stream.get()));
    }
  }

  void enqueue(ferry::stream_ref stream) { context_->enqueue(stream); }

  // Outputs to the host; blocks until they are there.
  void download(ferry::stream_ref stream) {
    for (std::size_t i = 0; i < io_.size(); ++i)
      if (io_[i].role == tensor_role::output)
        FERRY_CUDA_TRY(
            cudaMemcpyAsync(host_[i].data(), device_[i].get(), host_[i].size(), cudaMemcpyDeviceToHost, stream.get()));
    stream.synchronize_blocking();
  }

  [[nodiscard]] std::vector<std::vector<std::byte>> outputs() const {
    std::vector<std::vector<std::byte>> out;
    for (std::size_t i = 0; i < io_.size(); ++i)
      if (io_[i].role == tensor_role::output) out.push_back(host_[i]);
    return out;
  }

  [[nodiscard]] std::vector<std::vector<std::byte>> cpu_outputs() const {
    std::vector<std::span<const std::byte>> inputs;
    std::vector<std::vector<std::byte>> out;
    for (std::size_t i = 0; i < io_.size(); ++i) {
      if (io_[i].role == tensor_role::input)
        inputs.emplace_back(host_[i]);
      else
        out.emplace_back(host_[i].size());
    }
    std::vector<std::span<std::byte>> outputs(out.begin(), out.end());
    engine_.run_on_host(inputs, outputs);
    return out;
  }

  [[nodiscard]] const std::vector<tensor_spec>& io() const { return io_; }
  [[nodiscard]] ferry::engine_context& context() { return *context_; }
  [[nodiscard]] void* device_address(std::size_t i) const { return device_[i].get(); }

 private:
  host_reference_engine& engine_;
  std::vector<tensor_spec> io_;
  std::vector<std::vector<std::byte>> host_;
  std::vector<ferry::core::device_memory> device_;
  std::unique_ptr<ferry::engine_context> context_;  // last: destroyed before the memory it binds
};

std::vector<double> as_doubles(const std::vector<std::byte>& bytes, dtype type) {
  std::vector<double> values;
  if (type == dtype::f32) {
    const auto* v = reinterpret_cast<const float*>(bytes.data());
    for (std::size_t i = 0; i < bytes.size() / 4; ++i) values.push_back(v[i]);
  } else {
    const auto* v = reinterpret_cast<const __half*>(bytes.data());
    for (std::size_t i = 0; i < bytes.size() / 2; ++i) values.push_back(__half2float(v[i]));
  }
  return values;
}

// Compares every element of every output; reports the first few mismatches.
void expect_matches_cpu(const workload_case& c, const prepared_run& run, const std::vector<std::vector<std::byte>>& gpu,
                        const std::vector<std::vector<std::byte>>& cpu) {
  std::vector<const tensor_spec*> outputs;
  for (const auto& t : run.io())
    if (t.role == tensor_role::output) outputs.push_back(&t);
  ASSERT_EQ(gpu.size(), outputs.size());
  ASSERT_EQ(cpu.size(), outputs.size());
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const tensor_spec& spec = *outputs[o];
    ASSERT_EQ(gpu[o].size(), cpu[o].size());
    if (c.compare == comparison::exact) {
      EXPECT_EQ(std::memcmp(gpu[o].data(), cpu[o].data(), gpu[o].size()), 0)
          << c.label << ": '" << spec.name << "' differs from the CPU";
      continue;
    }
    const std::vector<double> g = as_doubles(gpu[o], spec.type);
    const std::vector<double> h = as_doubles(cpu[o], spec.type);
    double rms = 0.0;
    for (double v : h) rms += std::isnan(v) ? 0.0 : v * v;
    rms = std::sqrt(rms / static_cast<double>(h.size()));
    if (c.compare == comparison::mlp) ASSERT_GT(rms, 1e-3) << "outputs all ~0 would check nothing";
    int reported = 0;
    for (std::size_t i = 0; i < g.size(); ++i) {
      if (std::isnan(h[i]) && std::isnan(g[i])) continue;
      const double tolerance = c.compare == comparison::sums
                                   ? 1e-5 * (std::fabs(h[i]) + c.terms_per_output * c.largest_term)
                                   : 2e-2 * std::max(std::fabs(h[i]), rms);
      if (!(std::fabs(g[i] - h[i]) <= tolerance) && reported++ < 5)
        ADD_FAILURE() << c.label << ": '" << spec.name << "'[" << i << "] gpu " << g[i] << " vs cpu " << h[i]
                      << " (tolerance " << tolerance << ")";
    }
  }
}

void expect_identical(const std::vector<std::vector<std::byte>>& a, const std::vector<std::vector<std::byte>>& b,
                      const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t o = 0; o < a.size(); ++o) {
    ASSERT_EQ(a[o].size(), b[o].size());
    EXPECT_EQ(std::memcmp(a[o].data(), b[o].data(), a[o].size()), 0) << what << ", output " << o;
  }
}

class BuiltinWorkload : public ::testing::TestWithParam<workload_case> {};

TEST_P(BuiltinWorkload, MatchesCpuAndRepeatsBitIdentically) {
  const workload_case& c = GetParam();
  auto engine = make_engine(c);
  const auto concrete = engine->resolve({});
  prepared_run run(*engine, concrete);
  ferry::stream stream;

  run.fill_inputs(1);
  run.upload(stream);
  run.enqueue(stream);
  run.download(stream);
  const auto first = run.outputs();
  expect_matches_cpu(c, run, first, run.cpu_outputs());

  // Same input again: no atomics, no scheduling-dependent order, so the same bits.
  run.upload(stream);
  run.enqueue(stream);
  run.download(stream);
  expect_identical(first, run.outputs(), std::string(c.label) + ": second run on the same input");

  // Fresh input, as every benchmark request has: the engine reads its bindings anew.
  run.fill_inputs(2);
  run.upload(stream);
  run.enqueue(stream);
  run.download(stream);
  expect_matches_cpu(c, run, run.outputs(), run.cpu_outputs());
}

TEST_P(BuiltinWorkload, TwoContextsOnTwoStreamsKeepTheirOwnResults) {
  const workload_case& c = GetParam();
  auto engine = make_engine(c);
  const auto concrete = engine->resolve({});
  prepared_run a(*engine, concrete);
  prepared_run b(*engine, concrete);
  ferry::stream stream_a;
  ferry::stream stream_b;
  a.fill_inputs(11);
  b.fill_inputs(12);
  a.upload(stream_a);
  b.upload(stream_b);
  // Interleaved so both contexts have work in flight at the same time.
  for (int i = 0; i < 4; ++i) {
    a.enqueue(stream_a);
    b.enqueue(stream_b);
  }
  a.download(stream_a);
  b.download(stream_b);
  expect_matches_cpu(c, a, a.outputs(), a.cpu_outputs());
  expect_matches_cpu(c, b, b.outputs(), b.cpu_outputs());
}

// Owners of a captured graph and its executable instance.
struct graph_owner {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~graph_owner() {
    if (exec != nullptr) FERRY_CUDA_TRY_NOTHROW(cudaGraphExecDestroy(exec));
    if (graph != nullptr) FERRY_CUDA_TRY_NOTHROW(cudaGraphDestroy(graph));
  }
};

TEST_P(BuiltinWorkload, CapturedGraphGivesTheSameOutputsAsDirectEnqueue) {
  const workload_case& c = GetParam();
  auto engine = make_engine(c);
  prepared_run run(*engine, engine->resolve({}));
  ferry::stream stream;

  run.fill_inputs(21);
  run.upload(stream);
  run.enqueue(stream);  // direct first: also the warm-up that loads kernels before capture
  run.download(stream);
  const auto direct = run.outputs();

  graph_owner captured;
  FERRY_CUDA_TRY(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeGlobal));
  try {
    run.enqueue(stream);
  } catch (...) {
    cudaGraph_t broken = nullptr;
    (void)cudaStreamEndCapture(stream.get(), &broken);
    if (broken != nullptr) (void)cudaGraphDestroy(broken);
    throw;
  }
  FERRY_CUDA_TRY(cudaStreamEndCapture(stream.get(), &captured.graph));
  FERRY_CUDA_TRY(cudaGraphInstantiate(&captured.exec, captured.graph, 0));

  run.upload(stream);  // poisons the outputs again
  FERRY_CUDA_TRY(cudaGraphLaunch(captured.exec, stream.get()));
  run.download(stream);
  expect_identical(direct, run.outputs(), std::string(c.label) + ": graph replay vs direct");

  // The graph reads the bound buffers at replay time, so fresh input gives fresh output.
  run.fill_inputs(22);
  run.upload(stream);
  FERRY_CUDA_TRY(cudaGraphLaunch(captured.exec, stream.get()));
  run.download(stream);
  expect_matches_cpu(c, run, run.outputs(), run.cpu_outputs());
}

workload_case touch_case(const char* label, std::size_t input_bytes) {
  return {.label = label, .spec = "touch", .options = sized(input_bytes)};
}
workload_case sums_case(const char* label, const char* spec, std::size_t input_bytes, double terms) {
  return {.label = label,
          .spec = spec,
          .options = sized(input_bytes),
          .compare = comparison::sums,
          .terms_per_output = terms};
}

INSTANTIATE_TEST_SUITE_P(
    Builtin, BuiltinWorkload,
    ::testing::Values(touch_case("touch", default_bytes),
                      touch_case("touch_odd_tail", 4 * 1000003),  // n % 4 == 3: the scalar tail runs
                      sums_case("reduce", "reduce", default_bytes, std::ceil(default_floats / 1000)),
                      sums_case("reduce_fewer_elements_than_buckets", "reduce", 4 * 777, 1),
                      sums_case("sparse_0_1", "sparse:0.1", default_bytes, 1024),
                      sums_case("sparse_1_0", "sparse:1.0", default_bytes, 1024),
                      workload_case{.label = "mlp_2x256_batch8",
                                    .spec = "mlp:2x256",
                                    .options = sized(4096, 8),
                                    .compare = comparison::mlp},
                      workload_case{.label = "u8_normalize_reduce",
                                    .spec = "reduce",
                                    .options = sized(std::size_t{4} * 3 * 224 * 224 * 4),
                                    .u8_images = true,
                                    .compare = comparison::sums,
                                    .terms_per_output = std::ceil(4.0 * 3 * 224 * 224 / 1000),
                                    .largest_term = largest_normalized},
                      // f16 conversion path: mlp over [batch, 3*8*8] from 8x8 images.
                      workload_case{.label = "u8_normalize_mlp",
                                    .spec = "mlp:1x192",
                                    .options = sized(4096, 4),
                                    .u8_images = true,
                                    .images = square_images(8),
                                    .compare = comparison::mlp}),
    [](const ::testing::TestParamInfo<workload_case>& info) { return std::string(info.param.label); });

TEST(BuiltinContext, SparseWritesNaNForOutOfRangeIndices) {
  auto engine = ferry::make_builtin_engine("sparse:1", sized(8 * 4096));
  prepared_run run(*engine, engine->resolve({}));
  ferry::stream stream;
  run.fill_inputs(5);  // indices[0] = -1 and indices[7] = 8 = pages
  run.upload(stream);
  run.enqueue(stream);
  run.download(stream);
  const auto rows = as_doubles(run.outputs()[0], dtype::f32);
  ASSERT_EQ(rows.size(), 8U);
  EXPECT_TRUE(std::isnan(rows[0]));
  EXPECT_TRUE(std::isnan(rows[7]));
  for (std::size_t j = 1; j < 7; ++j) EXPECT_FALSE(std::isnan(rows[j])) << j;
}

TEST(BuiltinContext, RefusesMisuse) {
  auto engine = ferry::make_builtin_engine("touch", sized(4096));
  const auto concrete = engine->resolve({});
  auto context = engine->make_context(concrete);
  auto memory = ferry::core::allocate_device(8192);
  ferry::stream stream;

  EXPECT_THROW(context->enqueue(stream), ferry::invalid_argument);  // nothing bound
  EXPECT_THROW(context->bind("nope", memory.get()), ferry::invalid_argument);
  EXPECT_THROW(context->bind("input", static_cast<std::byte*>(memory.get()) + 4), ferry::invalid_argument);
  EXPECT_THROW(context->bind("input", nullptr), ferry::invalid_argument);
  context->bind("input", memory.get());
  EXPECT_THROW(context->enqueue(stream), ferry::invalid_argument);  // output still unbound
  context->bind("output", static_cast<std::byte*>(memory.get()) + 4096);
  EXPECT_NO_THROW(context->enqueue(stream));
  stream.synchronize_blocking();

  auto changed = concrete;
  changed[0].shape = {2048};
  EXPECT_THROW((void)engine->make_context(changed), ferry::invalid_argument);

  auto mlp = ferry::make_builtin_engine("mlp:1x64", sized(4096, 4));
  auto mlp_io = mlp->resolve({});
  mlp_io[1].shape[0] = 5;  // output batch no longer matches the input's
  EXPECT_THROW((void)mlp->make_context(mlp_io), ferry::invalid_argument);
}

}  // namespace
