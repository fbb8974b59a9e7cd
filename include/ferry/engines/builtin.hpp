// Built-in CUDA workloads: engines that need no model file, for measuring transfer strategies
// against work of a known shape (memory-bound, reduction, sparse gather, GEMM-bound), plus a
// wrapper that lets images cross the bus as bytes and be normalised on the GPU.
//
// Every built-in engine can also compute its outputs on the CPU (host_reference_engine), which
// is what GPU-vs-CPU tests, output checks and a GPU-less server rely on.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "ferry/engines/engine.hpp"

namespace ferry {

// An engine whose outputs can also be computed on the CPU, bit-exactly or within a stated
// tolerance (see each workload in make_builtin_engine).
class host_reference_engine : public engine {
 public:
  // Computes the outputs on the CPU. inputs and outputs are host bytes in the order of the
  // inputs / outputs in resolve()'s result; their sizes must be those of one concrete
  // resolution (a dynamic batch is read off the first input's size). Throws invalid_argument
  // for a wrong count, size or alignment of the spans.
  virtual void run_on_host(std::span<const std::span<const std::byte>> inputs,
                           std::span<const std::span<std::byte>> outputs) const = 0;

  // Floating-point operations one request performs on the device for this concrete I/O (from
  // resolve()), for achieved-FLOP/s reports; 0 when the engine cannot say.
  [[nodiscard]] virtual double flops_per_request(std::span<const tensor_spec> concrete_io) const;
};

struct builtin_options {
  std::size_t input_bytes = std::size_t{19} << 20;  // touch, reduce, sparse: size of the f32 input
  std::int64_t batch = 16;                          // mlp: batch used when none is bound
};

// Makes a built-in engine from a spec:
//   "touch"            input "input" f32 [n], output "output" f32 [n], out = in * 2 + 1
//                      (n = input_bytes / 4). Memory-bound. GPU == CPU bit-exactly.
//   "reduce"           input "input" f32 [n], output "sums" f32 [1000]; sums[b] is the sum of the
//                      contiguous chunk [b*n/1000, (b+1)*n/1000). Deterministic on the GPU
//                      (bit-identical across runs); CPU sums in double, so compare with a
//                      relative tolerance of 1e-5 of the chunk's sum of magnitudes.
//   "sparse:<f>"       inputs "table" f32 [n] (pages of 1024 floats; pages = n / 1024) and
//                      "indices" i32 [m], m = max(1, round(f * pages)), f in (0, 1]; output
//                      "rows" f32 [m], rows[j] = sum of the 1024 floats of page indices[j], NaN
//                      where indices[j] is outside [0, pages). Same tolerance as reduce.
//   "mlp:<L>x<W>"      input "input" f16 [batch, W], output "output" f16 [batch, W]; L layers of
//                      y = relu(x . W_k) with cuBLAS (fp16 in/out, fp32 accumulate), fixed-seed
//                      random fp16 weights. Batch is dynamic (options.batch when unbound).
//                      Compare with |gpu - cpu| <= 2e-2 * max(|cpu|, rms(cpu)).
// Throws invalid_argument naming the problem for an unknown or malformed spec or bad options.
// Needs no GPU: device memory is made only by make_context.
[[nodiscard]] std::unique_ptr<host_reference_engine> make_builtin_engine(std::string_view spec,
                                                                         const builtin_options& options);

// Bytes a built-in engine allocates when it is made, so that a caller can check them against the
// memory it has first: mlp's fp16 weights (layers x width x width x 2 bytes: 32 GiB at its
// largest, mlp:64x16384), made on the host, and the same again on each device a context is made
// on. The other workloads own no memory of their own (0). Throws invalid_argument as
// make_builtin_engine does for a malformed spec.
[[nodiscard]] std::size_t builtin_weight_bytes(std::string_view spec);

// Checks a built-in spec's grammar (the kind and its parameter) without making the engine, so a
// typo is named before anything is built or measured. Throws invalid_argument as
// make_builtin_engine would.
void validate_builtin_spec(std::string_view spec);

struct normalize_options {
  std::int64_t height = 224;
  std::int64_t width = 224;
  std::array<float, 3> mean{0.485F, 0.456F, 0.406F};  // per channel (R, G, B), on [0, 1] values
  std::array<float, 3> stddev{0.229F, 0.224F, 0.225F};
};

// Wraps an engine so that its first input becomes uint8 HWC images [batch, H, W, 3] (same name);
// a GPU kernel converts them into the inner engine's first-input dtype (f32 or f16), CHW
// [batch, 3, H, W], as (value / 255 - mean[c]) / stddev[c], into a device buffer owned by the
// context, then the inner engine runs. Images cross the bus as bytes (4x fewer than f32).
// The inner first input must be f32 or f16 with 3*H*W elements per batch item: [dyn, 3, H, W],
// [dyn, 3*H*W], [dyn] (any multiple of 3*H*W) or a static shape holding a whole number of images.
// Other inputs and all outputs pass through unchanged. The conversion is bit-exact GPU vs CPU.
// Throws invalid_argument when the inner first input cannot take images.
[[nodiscard]] std::unique_ptr<engine> with_u8_normalize(std::unique_ptr<engine> inner,
                                                        const normalize_options& options);
// The same, keeping the CPU reference: run_on_host normalises on the CPU, then runs the inner
// engine's run_on_host. (The overload above also returns a host_reference_engine, behind an
// engine pointer, when its inner engine is one.)
[[nodiscard]] std::unique_ptr<host_reference_engine> with_u8_normalize(std::unique_ptr<host_reference_engine> inner,
                                                                       const normalize_options& options);

}  // namespace ferry
