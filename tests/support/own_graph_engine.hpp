// A test engine whose contexts a plain stream capture "cannot take" (they say so, as an
// AOTInductor package's do) but that capture graphs of their own when asked
// (engine_context::use_own_graphs), with engines/graph_cache.hpp and the CUDA runtime: y = x + 0
// by one device copy of a [16, 256] f32 tensor. With `synchronises`, each run also synchronises
// its stream, which no capture can take, so every capture fails, is ended cleanly, and the run goes
// on plainly, as a package that synchronises does. It also takes a smaller batch ([B, 256], B from
// 1 to 16) and its contexts reshape to one, as a package's do (graphs keyed by the new dims). The
// engine counts what its contexts did.
// Used in process by the session's GPU tests and through the C ABI by tests/backends (seam).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engines/graph_cache.hpp"
#include "ferry/core/error.hpp"
#include "ferry/engines/engine.hpp"

namespace ferry::test {

struct own_graph_counts {
  std::atomic<int> plain_runs{0}, captures{0}, failures{0}, replays{0}, reshapes{0};
};

class own_graph_context final : public engine_context {
 public:
  own_graph_context(const std::vector<tensor_spec>& io, bool synchronises, own_graph_counts& counts)
      : engine_context(synchronises ? "own-graphs-sync" : "own-graphs", tensor_names(io)),
        bytes_(io.front().bytes()),
        dims_(io.front().shape),
        synchronises_(synchronises),
        counts_(counts) {}

 private:
  // A graph's executable, destroyed with it (the cache destroys the graphs it drops).
  struct exec {
    cudaGraphExec_t handle = nullptr;
    explicit exec(cudaGraphExec_t h) : handle(h) {}
    exec(exec&& other) noexcept : handle(std::exchange(other.handle, nullptr)) {}
    exec(const exec&) = delete;
    exec& operator=(const exec&) = delete;
    exec& operator=(exec&&) = delete;
    ~exec() {
      if (handle != nullptr) FERRY_CUDA_TRY_NOTHROW(cudaGraphExecDestroy(handle));
    }
  };

  void do_bind(std::size_t, void*) override {}
  [[nodiscard]] bool do_reshape(std::span<const tensor_spec> io) override {
    bytes_ = io.front().bytes();
    dims_ = io.front().shape;
    ++counts_.reshapes;
    return true;
  }
  [[nodiscard]] std::optional<std::string> do_capture_refusal() const override {
    return "it stands for an engine that allocates while it runs";
  }
  [[nodiscard]] std::optional<std::string> do_use_own_graphs(int max_graphs) override {
    cache_.reset();
    if (max_graphs > 0) cache_.emplace(static_cast<std::size_t>(max_graphs));
    return std::nullopt;
  }
  [[nodiscard]] std::optional<std::string> do_own_graphs_failure() const override {
    if (!cache_) return std::nullopt;
    return cache_->first_failure();
  }

  void do_enqueue(stream_ref stream) override {
    if (!cache_) {
      run(stream.get());
      ++counts_.plain_runs;
      return;
    }
    const graph_key key{dims_, {device_addresses().begin(), device_addresses().end()}};
    const auto plan = cache_->next(key);
    switch (plan.step) {
      case graph_step::run_plain:
        run(stream.get());
        ++counts_.plain_runs;
        return;
      case graph_step::replay:
        FERRY_CUDA_TRY(cudaGraphLaunch(plan.graph->handle, stream.get()));
        ++counts_.replays;
        return;
      case graph_step::capture:
        run(stream.get());  // this request's answer
        ++counts_.plain_runs;
        capture(key, stream.get());
        return;
    }
  }

  void capture(const graph_key& key, cudaStream_t stream) {
    FERRY_CUDA_TRY(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    std::string failure;
    try {
      run(stream);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
    (void)cudaGetLastError();
    if (failure.empty() && ended != cudaSuccess)
      failure = std::string("cudaStreamEndCapture: ") + cudaGetErrorName(ended);
    cudaGraphExec_t handle = nullptr;
    if (failure.empty() && cudaGraphInstantiate(&handle, graph, 0) != cudaSuccess) {
      (void)cudaGetLastError();
      failure = "cudaGraphInstantiate failed";
    }
    if (graph != nullptr) FERRY_CUDA_TRY_NOTHROW(cudaGraphDestroy(graph));
    if (failure.empty()) {
      cache_->captured(key, exec(handle));
      ++counts_.captures;
    } else {
      cache_->capture_failed(key, "the run synchronises its stream: " + failure);
      ++counts_.failures;
    }
  }

  void run(cudaStream_t stream) const {
    const auto addresses = device_addresses();
    FERRY_CUDA_TRY(cudaMemcpyAsync(addresses[1], addresses[0], bytes_, cudaMemcpyDefault, stream));
    if (synchronises_) FERRY_CUDA_TRY(cudaStreamSynchronize(stream));
  }

  std::size_t bytes_;
  std::vector<std::int64_t> dims_;
  bool synchronises_;
  own_graph_counts& counts_;
  std::optional<graph_cache<exec>> cache_;
};

class own_graph_engine final : public engine {
 public:
  explicit own_graph_engine(bool synchronises) : synchronises_(synchronises) {
    io_ = {{.name = "x", .type = dtype::f32, .shape = {16, 256}, .role = tensor_role::input, .index_bound = {}},
           {.name = "y", .type = dtype::f32, .shape = {16, 256}, .role = tensor_role::output, .index_bound = {}}};
  }
  [[nodiscard]] std::string_view name() const override { return synchronises_ ? "own-graphs-sync" : "own-graphs"; }
  [[nodiscard]] const std::vector<tensor_spec>& io() const override { return io_; }
  [[nodiscard]] std::vector<tensor_spec> resolve(std::span<const shape_binding> inputs) const override {
    if (inputs.empty()) return io_;
    if (inputs.size() != 1 || inputs[0].name != "x" || inputs[0].dims.size() != 2 || inputs[0].dims[1] != 256 ||
        inputs[0].dims[0] < 1 || inputs[0].dims[0] > 16)
      throw invalid_argument("own-graphs: it takes x of [1..16, 256]");
    auto io = io_;
    io[0].shape[0] = io[1].shape[0] = inputs[0].dims[0];
    return io;
  }
  [[nodiscard]] std::unique_ptr<engine_context> make_context(const std::vector<tensor_spec>& io) override {
    return std::make_unique<own_graph_context>(io, synchronises_, counts);
  }

  own_graph_counts counts;

 private:
  bool synchronises_;
  std::vector<tensor_spec> io_;
};

}  // namespace ferry::test
