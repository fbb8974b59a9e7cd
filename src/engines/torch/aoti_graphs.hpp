// CUDA graphs an AOTInductor context captures of its own runs (engine_context::use_own_graphs),
// for the package a plain stream capture cannot take: its run allocates through libtorch's
// caching allocator. Each graph is captured with at::cuda::CUDAGraph on a memory pool private to
// the context's graphs (at::cuda::graph_pool_handle(), as torch.compile(mode="reduce-overhead")
// does), so the run's allocations come back at the same addresses on every replay; the copies of
// the package's outputs into the bound output addresses are captured with it, so a replay writes
// the answer where ferry reads it. engines/graph_cache.hpp decides when a key is captured; this
// does the capturing and replaying. Built only with the torch backend (it links libtorch).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <ATen/cuda/CUDAGraph.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include "engines/graph_cache.hpp"

namespace ferry::aoti {

// The package as captures run it. AOTInductor's usual runner hands each run one of several model
// instances and tracks them with CUDA events it records after a run and queries before the next
// (AOTInductorModelContainer::run): a query inside a capture invalidates it, and an event
// recorded inside one is no event to query afterwards. Its single-threaded runner
// (run_single_threaded, made for CUDA graphs) tracks nothing, so captures go through a second load
// of the package made that way: one run at a time (its one model instance is not thread-safe),
// loaded when a session first asks for graphs, at the cost of the package's weights once more.
// The graphs replay its kernels and read its weights, so it outlives every context.
class capture_runner {
 public:
  capture_runner(std::string path, int device) : path_(std::move(path)), device_(device) {}

  // The loader, loaded on the first call; the caller holds mutex(). Throws what loading throws.
  [[nodiscard]] torch::inductor::AOTIModelPackageLoader& loader();
  [[nodiscard]] std::mutex& mutex() noexcept { return mutex_; }

 private:
  std::string path_;
  int device_;
  std::mutex mutex_;
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader_;
};

// Enqueues one run of the package through `loader` on the current stream, with the copies of its
// outputs into the bound output addresses.
using package_run = std::function<void(torch::inductor::AOTIModelPackageLoader& loader)>;

// at::cuda::CUDAGraph, telling whether its capture got through capture_end(): from then on its
// own destructor gives its pool back; before, nobody would (see abandon in aoti_graphs.cpp).
class context_graph final : public at::cuda::CUDAGraph {
 public:
  [[nodiscard]] bool capture_ended() const noexcept { return capture_ended_; }
};

// One context's graphs: at most max_graphs, on one pool shared by them (they replay one after
// another on the slot's stream, so they may share memory as graphs captured into one pool do).
class context_graphs {
 public:
  context_graphs(capture_runner& captures, std::size_t max_graphs, int device);
  context_graphs(const context_graphs&) = delete;
  context_graphs& operator=(const context_graphs&) = delete;

  // One request of `key` on the current stream (the slot's, made current by the caller): `run`
  // through `plain` while the key warms up or after its capture failed; on the capture step,
  // `run` through the capture runner for this request's answer (and so that this thread's
  // libtorch handles and workspaces for this stream, and the runner's kernels, exist before a
  // capture), then the capture itself; the key's graph replayed after.
  void enqueue(const graph_key& key, torch::inductor::AOTIModelPackageLoader& plain, const package_run& run);

  [[nodiscard]] const std::optional<std::string>& first_failure() const noexcept { return cache_.first_failure(); }
  [[nodiscard]] std::size_t max_graphs() const noexcept { return cache_.max_graphs(); }

 private:
  void capture(const graph_key& key, const package_run& run);

  capture_runner& captures_;
  int device_;
  c10::MempoolId_t pool_;
  graph_cache<std::unique_ptr<context_graph>> cache_;
};

}  // namespace ferry::aoti
