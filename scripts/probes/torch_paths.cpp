// Times one AOTInductor package outside ferry, request after request, under the stream layouts
// ferry uses, to find why the same engine runs slower after a pinned input copy inside ferry than
// in a bare loop. Every variant runs in blocks of `iters`, and the blocks interleave (A B C A B C)
// so that a drift of the GPU or the process shows as a block-to-block difference, not as a
// difference between variants. For each block: the host span of a request, the event span of the
// engine alone, and the host time the CPU spent inside run() (enqueueing kernels).
//
//   built on the GPU host against its PyTorch: scripts/probes/build_torch_paths.sh
//   torch_paths PACKAGE.pt2 BATCH [ITERS]
#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <emmintrin.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                            \
  do {                                                                                         \
    cudaError_t e_ = (call);                                                                   \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

using clk = std::chrono::steady_clock;
static double us(clk::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }
static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct variant {
  const char* name;
  bool copy;                     // a pinned H2D copy of the input before the engine
  bool two_streams;              // the copy on its own stream, the engine waiting on an event (ferry's layout)
  bool fill;                     // the CPU writes fresh input (streaming stores) before each request
  bool blocking_stream = false;  // streams created without cudaStreamNonBlocking
};

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: torch_paths PACKAGE.pt2 BATCH [ITERS]\n");
    return 2;
  }
  const std::string path = argv[1];
  const long batch = std::atol(argv[2]);
  const int iters = argc > 3 ? std::atoi(argv[3]) : 100;
  CHECK(cudaSetDevice(0));
  torch::inductor::AOTIModelPackageLoader loader(path, "model", false, 2, 0);

  const std::vector<int64_t> shape{batch, 3, 224, 224};
  const std::size_t bytes = std::size_t(batch) * 3 * 224 * 224 * 2;
  void* host = nullptr;
  void* dev = nullptr;
  CHECK(cudaMallocHost(&host, bytes));
  CHECK(cudaMalloc(&dev, bytes));
  std::memset(host, 0x3C, bytes);
  CHECK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
  std::vector<at::Tensor> inputs{at::from_blob(dev, shape, at::TensorOptions().dtype(at::kHalf).device(at::kCUDA, 0))};

  cudaStream_t nb_compute, nb_copy, b_compute, b_copy;
  CHECK(cudaStreamCreateWithFlags(&nb_compute, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&nb_copy, cudaStreamNonBlocking));
  CHECK(cudaStreamCreate(&b_compute));
  CHECK(cudaStreamCreate(&b_copy));
  cudaEvent_t h2d_end, c0, c1;
  CHECK(cudaEventCreate(&h2d_end));
  CHECK(cudaEventCreate(&c0));
  CHECK(cudaEventCreate(&c1));

  const variant variants[] = {
      {"device-resident, no fill", false, false, false},
      {"device-resident, fill", false, false, true},
      {"pinned copy, one stream, fill", true, false, true},
      {"pinned copy, two streams, fill", true, true, true},
      {"pinned copy, two streams, no fill", true, true, false},
      {"pinned copy, two blocking streams, fill", true, true, true, true},
  };
  std::printf("%-42s %6s %10s %10s %10s %10s\n", "variant", "block", "request", "engine", "enqueue", "fill");
  for (int round = 0; round < 3; ++round) {
    for (const auto& v : variants) {
      cudaStream_t compute = v.blocking_stream ? b_compute : nb_compute;
      cudaStream_t copy = v.two_streams ? (v.blocking_stream ? b_copy : nb_copy) : compute;
      c10::cuda::CUDAStreamGuard guard(c10::cuda::getStreamFromExternal(compute, 0));
      std::vector<double> total, engine, enqueue, fills;
      for (int it = 0; it < iters + 10; ++it) {
        const auto f0 = clk::now();
        if (v.fill) {
          auto* p = static_cast<__m128i*>(host);
          const __m128i x = _mm_set1_epi32(0x3C003C00 ^ (it << 1));
          for (std::size_t i = 0; i < bytes / 16; ++i) _mm_stream_si128(p + i, x);
          _mm_sfence();
        }
        if (!v.copy && v.fill) {
          CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, nb_copy));
          CHECK(cudaStreamSynchronize(nb_copy));
        }
        const auto t0 = clk::now();
        if (v.copy) {
          CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, copy));
          if (v.two_streams) {
            CHECK(cudaEventRecord(h2d_end, copy));
            CHECK(cudaStreamWaitEvent(compute, h2d_end, 0));
          }
        }
        CHECK(cudaEventRecord(c0, compute));
        const auto e0 = clk::now();
        auto outputs = loader.run(inputs, compute);
        const auto e1 = clk::now();
        CHECK(cudaEventRecord(c1, compute));
        CHECK(cudaStreamSynchronize(compute));
        const auto t1 = clk::now();
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, c0, c1));
        if (it >= 10) {
          total.push_back(us(t1 - t0));
          engine.push_back(ms * 1000.0);
          enqueue.push_back(us(e1 - e0));
          fills.push_back(us(t0 - f0));
        }
      }
      std::printf("%-42s %6d %10.1f %10.1f %10.1f %10.1f\n", v.name, round, median(total), median(engine),
                  median(enqueue), median(fills));
      std::fflush(stdout);
    }
  }
  return 0;
}
