// Experiment (not part of ferry): where does a 19 MB pinned H2D copy lose its ~10%?
#include <cuda_runtime.h>
#include <immintrin.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
#define CK(x)                                        \
  do {                                               \
    cudaError_t e = (x);                             \
    if (e != cudaSuccess) {                          \
      printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      exit(1);                                       \
    }                                                \
  } while (0)
static double med(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
static void write_regular(float* p, size_t n, int k) {
  for (size_t i = 0; i < n; ++i) p[i] = (float)((i ^ k) & 1023);
}
static void write_nt(float* p, size_t n, int k) {
  __m256i* q = (__m256i*)p;
  size_t m = n / 8;
  for (size_t i = 0; i < m; ++i) _mm256_stream_si256(q + i, _mm256_set1_epi32((int)(i ^ k)));
  _mm_sfence();
}
static volatile double sinkd;
static void read_buf(const float* p, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += p[i];
  sinkd = s;
}

__global__ void chunked(const float* in, size_t n, float* out) {
  __shared__ float part[256];
  size_t b = n * blockIdx.x / gridDim.x / 4 * 4,
         e = blockIdx.x + 1 == gridDim.x ? n : n * (blockIdx.x + 1) / gridDim.x / 4 * 4;
  float acc = 0;
  const float4* v = (const float4*)in;
#pragma unroll 4
  for (size_t i = b / 4 + threadIdx.x; i < e / 4; i += 256) {
    float4 x = v[i];
    acc += x.x + x.y + x.z + x.w;
  }
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int a = 128; a > 0; a /= 2) {
    if (threadIdx.x < a) part[threadIdx.x] += part[threadIdx.x + a];
    __syncthreads();
  }
  if (!threadIdx.x) out[blockIdx.x] = part[0];
}
template <int U>
__global__ void stride(const float* in, size_t n, float* out) {
  const float4* v = (const float4*)in;
  size_t m = n / 4;
  size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x, st = (size_t)gridDim.x * blockDim.x;
  float acc[U] = {};
  size_t i = t;
  for (; i + (U - 1) * st < m; i += U * st) {
    float4 x[U];
#pragma unroll
    for (int u = 0; u < U; ++u) x[u] = v[i + u * st];
#pragma unroll
    for (int u = 0; u < U; ++u) acc[u] += x[u].x + x[u].y + x[u].z + x[u].w;
  }
  for (; i < m; i += st) {
    float4 x = v[i];
    acc[0] += x.x + x.y + x.z + x.w;
  }
  float s = 0;
  for (int u = 0; u < U; ++u) s += acc[u];
  if (s == 12345.f) out[0] = s;
}

int main() {
  int sms;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  float* out;
  CK(cudaMalloc(&out, 1 << 20));
  for (size_t bytes : {size_t(16000000), size_t(19000000), size_t(32000000), size_t(64000000)}) {
    size_t n = bytes / 4;
    float *h, *h2, *d;
    CK(cudaMallocHost(&h, bytes));
    CK(cudaMallocHost(&h2, bytes));
    CK(cudaMalloc(&d, bytes));
    memset(h, 1, bytes);
    memset(h2, 1, bytes);
    auto copy = [&]() {
      CK(cudaEventRecord(a, s));
      CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s));
      CK(cudaEventRecord(b, s));
      CK(cudaEventSynchronize(b));
      float ms;
      CK(cudaEventElapsedTime(&ms, a, b));
      return ms * 1e3;
    };
    auto rate = [&](double us) { return bytes / us / 1e3; };
    for (int i = 0; i < 5; ++i) copy();
    std::vector<double> A, B, C, D, E, F;
    for (int i = 0; i < 30; ++i) A.push_back(copy());
    for (int i = 0; i < 30; ++i) {
      write_regular(h, n, i);
      B.push_back(copy());
    }
    for (int i = 0; i < 30; ++i) {
      write_nt(h, n, i);
      C.push_back(copy());
    }
    for (int i = 0; i < 30; ++i) {
      std::this_thread::sleep_for(std::chrono::microseconds(1500));
      D.push_back(copy());
    }
    for (int i = 0; i < 30; ++i) {
      read_buf(h2, n);
      write_regular(h, n, i);
      E.push_back(copy());
    }
    for (int i = 0; i < 30; ++i) {
      write_regular(h, n, i);
      std::this_thread::sleep_for(std::chrono::microseconds(1500));
      F.push_back(copy());
    }
    printf(
        "H2D %5.1f MB: back-to-back %.1f GB/s | after CPU write %.1f | after NT write %.1f | after 1.5ms idle %.1f | "
        "read+write %.1f | write+idle %.1f\n",
        bytes / 1e6, rate(med(A)), rate(med(B)), rate(med(C)), rate(med(D)), rate(med(E)), rate(med(F)));
    // zero-copy kernels
    float *m, *md;
    CK(cudaHostAlloc(&m, bytes, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer(&md, m, 0));
    memset(m, 1, bytes);
    auto kt = [&](auto launch, bool write) {
      std::vector<double> t;
      for (int i = 0; i < 25; ++i) {
        if (write) write_regular(m, n, i);
        CK(cudaEventRecord(a, s));
        launch();
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (i >= 5) t.push_back(ms * 1e3);
      }
      return rate(med(t));
    };
    auto k1 = [&] { chunked<<<1000, 256, 0, s>>>(md, n, out); };
    auto k2 = [&] { stride<4><<<sms * 8, 256, 0, s>>>(md, n, out); };
    auto k3 = [&] { stride<8><<<sms * 8, 256, 0, s>>>(md, n, out); };
    auto k4 = [&] { stride<4><<<sms * 4, 512, 0, s>>>(md, n, out); };
    auto k5 = [&] { stride<2><<<sms * 16, 128, 0, s>>>(md, n, out); };
    printf(
        "  mapped read: chunked %.1f/%.1f | stride u4 %.1f/%.1f | u8 %.1f/%.1f | u4x512 %.1f/%.1f | u2x128x16 "
        "%.1f/%.1f (no write / after CPU write)\n",
        kt(k1, false), kt(k1, true), kt(k2, false), kt(k2, true), kt(k3, false), kt(k3, true), kt(k4, false),
        kt(k4, true), kt(k5, false), kt(k5, true));
    CK(cudaFreeHost(h));
    CK(cudaFreeHost(h2));
    CK(cudaFree(d));
    CK(cudaFreeHost(m));
  }
}
