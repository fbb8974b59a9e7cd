#include "session/index_guard.hpp"

#include <algorithm>
#include <cstring>

#include <cub/block/block_reduce.cuh>

#include "core/mapped_device_pointer.hpp"
#include "ferry/error.hpp"

namespace ferry::detail {
namespace {

constexpr int threads_per_block = 256;
// Enough blocks to read an index tensor of a few MB at a good share of memory bandwidth; the last
// block combines this many findings.
constexpr int max_blocks = 128;
constexpr unsigned long long none = ~0ULL;

struct finding {
  unsigned long long count;
  unsigned long long first;
  long long value;
};

struct combine {
  __device__ finding operator()(const finding& a, const finding& b) const {
    finding r{a.count + b.count, a.first, a.value};
    if (b.first < a.first) {
      r.first = b.first;
      r.value = b.value;
    }
    return r;
  }
};

template <class T>
__global__ void guard_indices(T* data, unsigned long long n, long long bound, finding* partials, unsigned int* arrivals,
                              index_guard_result* result) {
  using reduce = cub::BlockReduce<finding, threads_per_block>;
  __shared__ typename reduce::TempStorage storage;
  __shared__ bool last;
  finding mine{0, none, 0};
  const auto limit = static_cast<unsigned long long>(bound);
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    const T v = data[i];
    // One unsigned comparison: a negative value wraps past any bound.
    if (static_cast<unsigned long long>(static_cast<long long>(v)) >= limit) {
      if (mine.count == 0) {  // the grid-stride loop meets a thread's values in order
        mine.first = i;
        mine.value = static_cast<long long>(v);
      }
      ++mine.count;
      data[i] = 0;  // the engine reads a valid index; the request fails all the same
    }
  }
  const finding block = reduce(storage).Reduce(mine, combine{});
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block;
    __threadfence();  // the finding is visible before the arrival that counts it
    last = atomicAdd(arrivals, 1U) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last || threadIdx.x != 0) return;
  __threadfence();
  finding all{0, none, 0};
  for (unsigned int b = 0; b < gridDim.x; ++b) {
    const volatile finding* p = &partials[b];  // written by other blocks: read from memory
    all = combine{}(all, finding{p->count, p->first, p->value});
  }
  result->count = all.count;
  result->first = all.first;
  result->value = all.value;
  *arrivals = 0;  // ready for the next launch (or graph replay)
}

}  // namespace

index_guard::index_guard(const tensor_spec& spec)
    : spec_(spec),
      scratch_(core::allocate_device(max_blocks * sizeof(finding) + sizeof(unsigned int))),
      result_(core::allocate_pinned(sizeof(index_guard_result), cudaHostAllocMapped)) {
  if (!spec.index_bound || (spec.type != dtype::i32 && spec.type != dtype::i64))
    throw invalid_argument("tensor '" + spec.name + "': only an int32 or int64 input with an index_bound is checked");
  const std::size_t n = spec.elements();
  const std::size_t per_block = std::size_t{threads_per_block} * 16;  // 16 values per thread
  blocks_ = static_cast<int>(std::clamp<std::size_t>((n + per_block - 1) / per_block, 1, max_blocks));
  FERRY_CUDA_TRY(
      cudaMemset(static_cast<std::byte*>(scratch_.get()) + max_blocks * sizeof(finding), 0, sizeof(unsigned int)));
  std::memset(result_.get(), 0, sizeof(index_guard_result));
  device_result_ = static_cast<index_guard_result*>(core::mapped_device_pointer(result_.get()));
}

void index_guard::enqueue(void* device_data, stream_ref stream) const {
  auto* partials = static_cast<finding*>(scratch_.get());
  auto* arrivals =
      reinterpret_cast<unsigned int*>(static_cast<std::byte*>(scratch_.get()) + max_blocks * sizeof(finding));
  const auto n = static_cast<unsigned long long>(spec_.elements());
  const long long bound = *spec_.index_bound;
  if (spec_.type == dtype::i64)
    guard_indices<<<blocks_, threads_per_block, 0, stream.get()>>>(static_cast<long long*>(device_data), n, bound,
                                                                   partials, arrivals, device_result_);
  else
    guard_indices<<<blocks_, threads_per_block, 0, stream.get()>>>(static_cast<int*>(device_data), n, bound, partials,
                                                                   arrivals, device_result_);
  FERRY_CUDA_CHECK_LAUNCH();
}

std::optional<index_violation> index_guard::violation() const {
  index_guard_result r;
  std::memcpy(&r, result_.get(), sizeof r);
  if (r.count == 0) return std::nullopt;
  return index_violation{.tensor = spec_.name,
                         .value = r.value,
                         .position = unravel(r.first, spec_.shape),
                         .bound = *spec_.index_bound,
                         .count = r.count};
}

}  // namespace ferry::detail
