// Times managed-memory request paths written by hand, outside ferry, one variant at a time, to
// find what makes a managed-prefetch request slower than the textbook loop and which output path
// is cheapest. Each request: the CPU writes fresh input into a managed buffer, the pages are
// steered as the variant says, a kernel reads the input and writes an output, the CPU reads the
// whole output. Timed on the host from the first stream operation to the last output byte read
// (the fill is timed apart), with a CUDA-event span around the input prefetch.
//
//   nvcc -O2 -std=c++20 -arch=sm_90 scripts/probes/managed_paths.cu -o managed_paths
//   ./managed_paths [--outputs | --tail] [MB ...]     (default 0.6 19 64)
// Without --outputs: the input prefetch with and without an event recorded just before it. With
// --outputs: where a managed output's pages should live (prefetched both ways, faulted, advised
// to host pages). With --tail: what an event after the kernel, or timing every other request, costs
// a small prefetch.
#include <cuda_runtime.h>
#include <emmintrin.h>

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

// Reads every input word; writes `out_words` words (a partial sum per thread, or the input
// scaled when the output is as large as the input).
__global__ void read_write(const float4* in, std::size_t n4, float* out, std::size_t out_words) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t tid = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (out_words >= n4 * 4) {
    float4* o = reinterpret_cast<float4*>(out);
    for (std::size_t i = tid; i < n4; i += stride) {
      float4 v = in[i];
      o[i] = make_float4(v.x * 2, v.y * 2, v.z * 2, v.w * 2);
    }
    return;
  }
  float s = 0;
  for (std::size_t i = tid; i < n4; i += stride) {
    float4 v = in[i];
    s += v.x + v.y + v.z + v.w;
  }
  out[tid % out_words] = s;  // racy by design: only the traffic matters here
}

enum class writes { cached, streaming };
enum class out_in { none, prefetch, discard_prefetch };
enum class out_back { prefetch_cpu, advise_host, none };

struct variant {
  const char* name;
  bool two_streams;
  writes w;
  bool prefetch_input = true;
  out_in before = out_in::none;
  out_back after = out_back::prefetch_cpu;
  bool discard_input_after = false;
  bool large_output = false;
  // An event recorded on the stream just before the prefetch (as a stage timer would), or none:
  // then the prefetch call is timed on the host and the event follows it.
  bool event_before = true;
  // The tail variants (--tail): no span events; `tail_event` records one event after the kernel
  // (as a session marks "inputs consumed"); `alternate` adds span events on every other request
  // and keeps only the others (as ferry's paired loop times every other request).
  bool span_events = true;
  bool tail_event = false;
  bool alternate = false;
};

static void fill(float* p, std::size_t n, unsigned salt, writes w) {
  if (w == writes::cached) {
    for (std::size_t i = 0; i < n; ++i) p[i] = float((i ^ salt) * 2654435761u >> 8) * (1.0f / 16777216.0f);
    return;
  }
  alignas(16) float tmp[4];
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int k = 0; k < 4; ++k) tmp[k] = float(((i + k) ^ salt) * 2654435761u >> 8) * (1.0f / 16777216.0f);
    _mm_stream_si128(reinterpret_cast<__m128i*>(p + i), _mm_load_si128(reinterpret_cast<const __m128i*>(tmp)));
  }
  for (; i < n; ++i) p[i] = 0;
  _mm_sfence();
}

static cudaMemLocation gpu() {
  cudaMemLocation l{};
  l.type = cudaMemLocationTypeDevice;
  l.id = 0;
  return l;
}
static cudaMemLocation cpu() {
  cudaMemLocation l{};
  l.type = cudaMemLocationTypeHost;
  l.id = 0;
  return l;
}

static double pct(std::vector<double> v, double f) {
  std::sort(v.begin(), v.end());
  return v[std::size_t(f * (v.size() - 1))];
}

static void run(const variant& v, std::size_t bytes, int iters) {
  const std::size_t n = bytes / 4, n4 = n / 4;
  const std::size_t out_bytes = v.large_output ? n4 * 16 : 4096;
  float* in = nullptr;
  float* out = nullptr;
  CHECK(cudaMallocManaged(&in, n4 * 16));
  CHECK(cudaMallocManaged(&out, out_bytes));
  if (v.after == out_back::advise_host) {
    CHECK(cudaMemAdvise(out, out_bytes, cudaMemAdviseSetPreferredLocation, cpu()));
    CHECK(cudaMemAdvise(out, out_bytes, cudaMemAdviseSetAccessedBy, gpu()));
  }
  cudaStream_t s, c;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking));
  cudaStream_t copy = v.two_streams ? c : s;
  cudaEvent_t e0, e1, fork, join;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  std::vector<double> total, fills, pre, calls;
  volatile double sink = 0;
  for (int it = 0; it < iters + 20; ++it) {
    const auto f0 = clk::now();
    fill(in, n4 * 4, unsigned(it) * 977u, v.w);
    const bool spans = v.span_events || (v.alternate && it % 2 == 1);
    const auto t0 = clk::now();
    if (spans && v.event_before) CHECK(cudaEventRecord(e0, copy));
    const auto p0 = clk::now();
    if (v.prefetch_input) CHECK(cudaMemPrefetchAsync(in, n4 * 16, gpu(), 0, copy));
    const double call_us = us(clk::now() - p0);
    if (spans && !v.event_before) CHECK(cudaEventRecord(e0, copy));
    if (v.before == out_in::prefetch) CHECK(cudaMemPrefetchAsync(out, out_bytes, gpu(), 0, copy));
    if (v.before == out_in::discard_prefetch) {
      void* p = out;
      std::size_t sz = out_bytes;
      cudaMemLocation loc = gpu();
      std::size_t idx = 0;
      CHECK(cudaMemDiscardAndPrefetchBatchAsync(&p, &sz, 1, &loc, &idx, 1, 0, copy));
    }
    if (spans) CHECK(cudaEventRecord(e1, copy));
    if (v.two_streams) CHECK(cudaStreamWaitEvent(s, e1, 0));
    read_write<<<264, 512, 0, s>>>(reinterpret_cast<const float4*>(in), n4, out, out_bytes / 4);
    CHECK(cudaGetLastError());
    if (v.tail_event && !spans) CHECK(cudaEventRecord(join, s));
    if (v.two_streams) {
      CHECK(cudaEventRecord(join, s));
      CHECK(cudaStreamWaitEvent(copy, join, 0));
    }
    if (v.after == out_back::prefetch_cpu) CHECK(cudaMemPrefetchAsync(out, out_bytes, cpu(), 0, copy));
    if (v.discard_input_after) {
      void* p = in;
      std::size_t sz = n4 * 16;
      CHECK(cudaMemDiscardBatchAsync(&p, &sz, 1, 0, copy));
    }
    CHECK(cudaStreamSynchronize(copy));
    double acc = 0;
    for (std::size_t i = 0; i < out_bytes / 4; i += 1) acc += out[i];
    sink = sink + acc;
    const auto t1 = clk::now();
    float ms = 0;
    if (spans) CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (it >= 20 && !(v.alternate && spans)) {
      total.push_back(us(t1 - t0));
      fills.push_back(us(t0 - f0));
      pre.push_back(spans ? ms * 1000 + (v.event_before ? 0.0 : call_us) : call_us);
      calls.push_back(call_us);
    }
  }
  const double mb = double(n4 * 16) / 1e6;
  const double pm = pct(pre, 0.5);
  std::printf(
      "%-38s %7.1f MB  request %8.1f us (p90 %8.1f)  fill %8.1f us  input prefetch %8.1f us = %5.1f GB/s"
      "  (the call: %7.1f us)\n",
      v.name, mb, pct(total, 0.5), pct(total, 0.9), pct(fills, 0.5), pm,
      v.prefetch_input && pm > 0 ? mb * 1e3 / pm : 0.0, pct(calls, 0.5));
  std::fflush(stdout);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaStreamDestroy(c));
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  CHECK(cudaEventDestroy(fork));
  CHECK(cudaEventDestroy(join));
}

int main(int argc, char** argv) {
  std::vector<double> sizes;
  bool outputs = false, tail = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--outputs")
      outputs = true;
    else if (std::string(argv[i]) == "--tail")
      tail = true;
    else
      sizes.push_back(std::atof(argv[i]));
  }
  if (sizes.empty()) sizes = {0.6, 19, 64};
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(nullptr));
  // Outputs advised to host pages and never prefetched (ferry's managed-prefetch), a reduce-sized
  // output; what changes is whether an event sits on the stream right before the prefetch.
  variant event_first{
      "event, then prefetch (1 stream)", false, writes::streaming, true, out_in::none, out_back::advise_host};
  variant prefetch_first = event_first;
  prefetch_first.name = "prefetch, then event (1 stream)";
  prefetch_first.event_before = false;
  variant two_streams = prefetch_first;
  two_streams.name = "prefetch, then event (2 streams)";
  two_streams.two_streams = true;
  variant big_out = prefetch_first;
  big_out.name = "prefetch first, big output in host pages";
  big_out.large_output = true;
  const std::vector<variant> input_variants{event_first, prefetch_first, two_streams, big_out};
  // The output paths (--outputs): where should a managed output's pages live?
  const variant output_variants[] = {
      {"recipe: 1 stream, cached writes", false, writes::cached},
      {"recipe: 1 stream, streaming writes", false, writes::streaming},
      {"2 streams, streaming, out->gpu", true, writes::streaming, true, out_in::prefetch},
      {"1 stream, streaming, out->gpu", false, writes::streaming, true, out_in::prefetch},
      {"1 stream, streaming, discard in", false, writes::streaming, true, out_in::none, out_back::prefetch_cpu, true},
      {"big out: prefetch out both ways", false, writes::streaming, true, out_in::prefetch, out_back::prefetch_cpu,
       false, true},
      {"big out: out->cpu only", false, writes::streaming, true, out_in::none, out_back::prefetch_cpu, false, true},
      {"big out: discard+prefetch, ->cpu", false, writes::streaming, true, out_in::discard_prefetch,
       out_back::prefetch_cpu, false, true},
      {"big out: advise host, no prefetch", false, writes::streaming, true, out_in::none, out_back::advise_host, false,
       true},
      {"big out: left on gpu, cpu faults", false, writes::streaming, true, out_in::none, out_back::none, false, true},
  };
  // The tail (--tail): what else on the stream costs a small prefetch its fast path? ferry's
  // session ends every request with an event (inputs consumed) and times every other request.
  variant bare = prefetch_first;
  bare.name = "tail: none (the recipe)";
  bare.span_events = false;
  variant tail_event = bare;
  tail_event.name = "tail: an event after the kernel";
  tail_event.tail_event = true;
  variant alternate = bare;
  alternate.name = "tail: every other request timed";
  alternate.alternate = true;
  variant both = tail_event;
  both.name = "tail: event + every other timed";
  both.alternate = true;
  const std::vector<variant> tail_variants{bare, tail_event, alternate, both, bare};
  for (double mb : sizes) {
    const std::size_t bytes = std::size_t(mb * 1e6) / 16 * 16;
    if (tail)
      for (const auto& v : tail_variants) run(v, bytes, 400);
    else if (outputs)
      for (const auto& v : output_variants) run(v, bytes, mb > 30 ? 60 : 150);
    else
      for (const auto& v : input_variants) run(v, bytes, mb > 30 ? 60 : 150);
    std::printf("\n");
  }
  return 0;
}
