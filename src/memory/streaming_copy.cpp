#include "ferry/memory/streaming_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "ferry/core/error.hpp"

#if defined(__x86_64__)
#include <emmintrin.h>  // SSE2: part of the x86-64 baseline, so no runtime dispatch is needed
#endif

namespace ferry {

void copy_streaming(std::span<std::byte> destination, std::span<const std::byte> source) {
  if (destination.size() != source.size())
    throw invalid_argument("copy_streaming: destination has " + std::to_string(destination.size()) + " bytes, source " +
                           std::to_string(source.size()));
  if (source.empty()) return;  // memcpy with a null pointer is undefined even for zero bytes
#if defined(__x86_64__)
  std::byte* out = destination.data();
  const std::byte* in = source.data();
  std::size_t left = source.size();
  // Streaming stores need 16-byte aligned destinations: the few head bytes go the ordinary way.
  const auto misaligned = reinterpret_cast<std::uintptr_t>(out) % 16;
  const std::size_t head = std::min(left, misaligned == 0 ? std::size_t{0} : 16 - misaligned);
  std::memcpy(out, in, head);
  out += head;
  in += head;
  left -= head;
  for (; left >= 16; left -= 16, out += 16, in += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(out), _mm_loadu_si128(reinterpret_cast<const __m128i*>(in)));
  std::memcpy(out, in, left);
  // Streaming stores are weakly ordered: without the fence a DMA enqueued next could read memory
  // before the write-combining buffers have drained.
  _mm_sfence();
#else
  // No such instruction to rely on here: aarch64's STNP is only a hint. The platforms ferry meets
  // without x86-64 (Grace over NVLink-C2C, Jetson) have caches coherent with the GPU's reads of
  // host memory, and the cost measured on PCIe (see the header) has not been measured on them;
  // a plain copy until it has.
  std::memcpy(destination.data(), source.data(), source.size());
#endif
}

}  // namespace ferry
