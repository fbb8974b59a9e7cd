#include "bench/measure/output_check.hpp"

#include <cmath>
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

namespace ferry::bench {
namespace {

double load(const std::byte* p, dtype t) {
  switch (t) {
    case dtype::f32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case dtype::f16: {
      __half v;
      std::memcpy(&v, p, 2);
      return static_cast<double>(__half2float(v));
    }
    case dtype::bf16: {
      __nv_bfloat16 v;
      std::memcpy(&v, p, 2);
      return static_cast<double>(__bfloat162float(v));
    }
    case dtype::i32: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case dtype::i64: {
      std::int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case dtype::i8: {
      std::int8_t v;
      std::memcpy(&v, p, 1);
      return v;
    }
    case dtype::u8:
    case dtype::boolean: {
      std::uint8_t v;
      std::memcpy(&v, p, 1);
      return v;
    }
  }
  return 0;
}

double tolerance(dtype t) {
  switch (t) {
    case dtype::f32:
      return 1e-5;
    case dtype::f16:
    case dtype::bf16:
      return 1e-2;
    default:
      return 0;
  }
}

}  // namespace

check_outcome compare_output(std::span<const std::byte> got, std::span<const std::byte> reference,
                             const tensor_spec& spec) {
  check_outcome out;
  if (got.size() != reference.size()) {
    out.matches = false;
    out.first_mismatch = fmt::format("output '{}': {} bytes vs reference {}", spec.name, got.size(), reference.size());
    return out;
  }
  const std::size_t width = size_of(spec.type);
  const std::size_t n = got.size() / width;
  const double tol = tolerance(spec.type);
  for (std::size_t i = 0; i < n; ++i) {
    const double a = load(got.data() + i * width, spec.type);
    const double b = load(reference.data() + i * width, spec.type);
    const bool both_nan = std::isnan(a) && std::isnan(b);
    const bool close = both_nan || std::abs(a - b) <= tol * std::max(1.0, std::abs(b));
    if (!close) {
      out.matches = false;
      out.first_mismatch = fmt::format("output '{}'[{}]: {} vs reference {}", spec.name, i, a, b);
      out.compared = i + 1;
      return out;
    }
  }
  out.compared = n;
  return out;
}

}  // namespace ferry::bench
