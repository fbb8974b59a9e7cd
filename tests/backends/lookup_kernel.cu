// The lookup test backend's kernel: vectors[i, d] = ids[i] + d / 4, and an id out of [0, rows)
// fails a device-side assert, as a real embedding's bounds check does (PyTorch's "index out of
// bounds"): the GPU's context is then lost for the process. Asserts stay on in every build type.
#undef NDEBUG
#include <cuda_runtime_api.h>

#include <cassert>
#include <cstddef>
#include <cstdint>

namespace {

__global__ void lookup_kernel(const std::int64_t* ids, float* vectors, std::size_t count, std::int64_t rows,
                              std::int64_t dim, int fault) {
  assert(!fault && "the fault forced by fault_after");
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const std::int64_t id = ids[i];
    assert(id >= 0 && id < rows && "index out of bounds");
    for (std::int64_t d = 0; d < dim; ++d)
      vectors[i * static_cast<std::size_t>(dim) + static_cast<std::size_t>(d)] =
          static_cast<float>(id) + static_cast<float>(d) / 4;
  }
}

}  // namespace

extern "C" const char* lookup_launch(const std::int64_t* ids, float* vectors, std::size_t count, std::int64_t rows,
                                     std::int64_t dim, int fault, cudaStream_t stream) {
  const std::size_t wanted = (count + 255) / 256;
  const auto blocks = static_cast<unsigned>(wanted == 0 ? 1 : wanted > 1024 ? 1024 : wanted);
  lookup_kernel<<<blocks, 256, 0, stream>>>(ids, vectors, count, rows, dim, fault);
  const cudaError_t status = cudaPeekAtLastError();
  return status == cudaSuccess ? nullptr : cudaGetErrorString(status);
}
