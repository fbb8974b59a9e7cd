#include "engines/torch/aoti_graphs.hpp"

#include <ATen/core/CachingHostAllocator.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAStream.h>

#include "ferry/core/error.hpp"

// No fmt here: libtorch ships its own fmt headers, which would shadow the system's in this file.
namespace ferry::aoti {
namespace {

// libtorch's messages carry a C++ backtrace after the first line.
std::string first_line(const char* what) {
  const std::string text(what);
  return text.substr(0, text.find('\n'));
}

// Ends a capture that failed before capture_end() was through, so that plain runs go on as before:
// the stream leaves capture mode (a capture the run invalidated stays open until ended), the CUDA
// error is cleared (capture errors are not sticky), the caching allocators stop routing the
// stream's allocations to the pool, and the pool reference capture_begin() took is given back.
// Returns what CUDA said of the capture, for the refusal.
std::string abandon(context_graph& graph, const c10::MempoolId_t& pool, cudaStream_t stream, c10::DeviceIndex device) {
  std::string cuda_said;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
    if (status == cudaStreamCaptureStatusInvalidated) cuda_said = "the run made a call no capture can take";
    cudaGraph_t partial = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream, &partial);
    if (ended != cudaSuccess && cuda_said.empty()) cuda_said = std::string("ending it: ") + cudaGetErrorName(ended);
    if (partial != nullptr) (void)cudaGraphDestroy(partial);
  }
  if (const cudaError_t last = cudaGetLastError(); last != cudaSuccess)
    cuda_said +=
        (cuda_said.empty() ? "" : ": ") + std::string(cudaGetErrorName(last)) + " (" + cudaGetErrorString(last) + ")";
  if (graph.capture_ended()) return cuda_said;  // its destructor gives the pool back
  try {
    c10::cuda::CUDACachingAllocator::endAllocateToPool(device, pool);
    c10::cuda::CUDACachingAllocator::releasePool(device, pool);
  } catch (const std::exception&) {  // capture_begin() failed before it routed anything to the pool
  }
  try {
    at::getHostAllocator(at::kCUDA)->end_allocate_to_pool(pool);
    at::getHostAllocator(at::kCUDA)->release_pool(pool);
  } catch (const std::exception&) {  // pinned host allocations were not routed to the pool
  }
  return cuda_said;
}

}  // namespace

torch::inductor::AOTIModelPackageLoader& capture_runner::loader() {
  if (!loader_)
    loader_ = std::make_unique<torch::inductor::AOTIModelPackageLoader>(
        path_, "model", /*run_single_threaded=*/true, /*num_runners=*/1, static_cast<c10::DeviceIndex>(device_));
  return *loader_;
}

context_graphs::context_graphs(capture_runner& captures, std::size_t max_graphs, int device)
    : captures_(captures), device_(device), pool_(at::cuda::graph_pool_handle()), cache_(max_graphs) {
  const std::lock_guard one_at_a_time(captures_.mutex());
  try {
    (void)captures_.loader();
  } catch (const std::exception& e) {
    throw unsupported("the package could not be loaded a second time, single-threaded, for capturing: " +
                      first_line(e.what()));
  }
}

void context_graphs::enqueue(const graph_key& key, torch::inductor::AOTIModelPackageLoader& plain,
                             const package_run& run) {
  const auto plan = cache_.next(key);
  switch (plan.step) {
    case graph_step::run_plain:
      run(plain);
      return;
    case graph_step::replay:
      (*plan.graph)->replay();  // on the current stream
      return;
    case graph_step::capture:
      capture(key, run);
      return;
  }
}

void context_graphs::capture(const graph_key& key, const package_run& run) {
  const std::lock_guard one_at_a_time(captures_.mutex());
  auto& runner = captures_.loader();
  run(runner);  // this request's answer; see enqueue()
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device_)).stream();
  auto graph = std::make_unique<context_graph>();
  std::string failure;
  try {
    // Thread-local: other slots' threads keep running the package plainly meanwhile.
    graph->capture_begin(pool_, cudaStreamCaptureModeThreadLocal);
    run(runner);
    graph->capture_end();  // and instantiates it
  } catch (const std::exception& e) {
    failure = first_line(e.what());
  }
  if (failure.empty()) {
    cache_.captured(key, std::move(graph));
    return;
  }
  const std::string cuda_said = abandon(*graph, pool_, stream, static_cast<c10::DeviceIndex>(device_));
  graph.reset();
  // A pool whose last reference is gone may not be captured into again until libtorch frees it:
  // the next capture takes a fresh one.
  if (cache_.graphs() == 0) pool_ = at::cuda::graph_pool_handle();
  cache_.capture_failed(key, "capturing the package's run failed, it runs without a graph: " + failure +
                                 (cuda_said.empty() ? "" : " (CUDA: " + cuda_said + ")"));
}

}  // namespace ferry::aoti
