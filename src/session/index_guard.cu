#include "session/index_guard.hpp"

#include <algorithm>
#include <cstring>

#include <cub/block/block_reduce.cuh>

#include "core/mapped_device_pointer.hpp"
#include "ferry/core/error.hpp"

namespace ferry::detail {
namespace {

constexpr int threads_per_block = 256;
constexpr int values_per_thread = 8;  // per loop round: independent loads in flight
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

// Scratch in device memory: one finding per block, then the blocks' arrival count and whether any
// block found a value out of range this launch.
struct guard_scratch {
  unsigned int arrivals;
  unsigned int found;
};

template <class T>
__global__ void guard_indices(T* data, unsigned long long n, long long bound, finding* partials, guard_scratch* scratch,
                              index_guard_result* result) {
  using reduce = cub::BlockReduce<finding, threads_per_block>;
  __shared__ typename reduce::TempStorage storage;
  __shared__ bool last;
  finding mine{0, none, 0};
  const auto limit = static_cast<unsigned long long>(bound);  // a negative value wraps past any bound
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  const unsigned long long first = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (unsigned long long base = first; base < n; base += stride * values_per_thread) {
    T v[values_per_thread];
#pragma unroll
    for (int k = 0; k < values_per_thread; ++k) {  // loads first, so they are in flight together
      const unsigned long long i = base + k * stride;
      v[k] = i < n ? data[i] : T{0};
    }
#pragma unroll
    for (int k = 0; k < values_per_thread; ++k) {
      if (static_cast<unsigned long long>(static_cast<long long>(v[k])) < limit) continue;
      const unsigned long long i = base + k * stride;
      if (mine.count == 0 || i < mine.first) {
        mine.first = i;
        mine.value = static_cast<long long>(v[k]);
      }
      ++mine.count;
      data[i] = 0;  // the engine reads a valid index; the request fails all the same
    }
  }
  // The usual case, every value inside: nothing to combine, and nothing for the host.
  const bool any = __syncthreads_or(mine.count > 0) != 0;
  const finding block = any ? reduce(storage).Reduce(mine, combine{}) : mine;
  if (gridDim.x == 1) {
    if (any && threadIdx.x == 0) *result = {block.count, block.first, block.value};
    return;
  }
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block;
    if (any) scratch->found = 1;
    __threadfence();  // the finding is visible before the arrival that counts it
    last = atomicAdd(&scratch->arrivals, 1U) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  const bool found = *static_cast<volatile unsigned int*>(&scratch->found) != 0;
  if (found) {  // every thread of the last block takes a share of the findings
    finding all{0, none, 0};
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x) {
      const volatile finding* p = &partials[b];  // written by other blocks: read from memory
      all = combine{}(all, finding{p->count, p->first, p->value});
    }
    const finding total = reduce(storage).Reduce(all, combine{});
    if (threadIdx.x == 0) *result = {total.count, total.first, total.value};
  }
  if (threadIdx.x == 0) *scratch = {0, 0};  // ready for the next launch (or graph replay)
}

}  // namespace

index_guard::index_guard(const tensor_spec& spec)
    : spec_(spec),
      capacity_(spec.elements()),
      result_(core::allocate_pinned(sizeof(index_guard_result), cudaHostAllocMapped)) {
  if (!spec.index_bound || (spec.type != dtype::i32 && spec.type != dtype::i64))
    throw invalid_argument("tensor '" + spec.name + "': only an int32 or int64 input with an index_bound is checked");
  int device = 0, multiprocessors = 1;
  FERRY_CUDA_TRY(cudaGetDevice(&device));
  FERRY_CUDA_TRY(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  // Enough blocks to keep every SM's loads in flight on a large input; one block (no combining)
  // for the usual index tensor of a few thousand ids.
  const std::size_t per_block = std::size_t{threads_per_block} * values_per_thread;
  const std::size_t wanted = (spec.elements() + per_block - 1) / per_block;
  blocks_ = static_cast<int>(std::clamp<std::size_t>(wanted, 1, static_cast<std::size_t>(4 * multiprocessors)));
  scratch_ = core::allocate_device(blocks_ * sizeof(finding) + sizeof(guard_scratch));
  FERRY_CUDA_TRY(
      cudaMemset(static_cast<std::byte*>(scratch_.get()) + blocks_ * sizeof(finding), 0, sizeof(guard_scratch)));
  reset();
  device_result_ = static_cast<index_guard_result*>(core::mapped_device_pointer(result_.get()));
}

void index_guard::reshape(const tensor_spec& spec) {
  if (spec.elements() > capacity_)
    throw invalid_argument("tensor '" + spec.name + "': the index check was made for " + std::to_string(capacity_) +
                           " values, not " + std::to_string(spec.elements()));
  spec_ = spec;
}

void index_guard::reset() noexcept { std::memset(result_.get(), 0, sizeof(index_guard_result)); }

void index_guard::enqueue(void* device_data, stream_ref stream) const {
  auto* partials = static_cast<finding*>(scratch_.get());
  auto* scratch = reinterpret_cast<guard_scratch*>(static_cast<std::byte*>(scratch_.get()) + blocks_ * sizeof(finding));
  const auto n = static_cast<unsigned long long>(spec_.elements());
  const long long bound = *spec_.index_bound;
  if (spec_.type == dtype::i64)
    guard_indices<<<blocks_, threads_per_block, 0, stream.get()>>>(static_cast<long long*>(device_data), n, bound,
                                                                   partials, scratch, device_result_);
  else
    guard_indices<<<blocks_, threads_per_block, 0, stream.get()>>>(static_cast<int*>(device_data), n, bound, partials,
                                                                   scratch, device_result_);
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
