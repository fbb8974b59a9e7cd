// io_buffer: one I/O tensor's memory under one strategy (docs/ARCHITECTURE.md §2).
//
// A buffer has a host view (the CPU writes inputs and reads outputs there), a device address
// (what the engine binds, aligned to at least 256 bytes) and two stream-ordered operations:
// to_device(stream) after the CPU has written an input, to_host(stream) after the engine has
// written an output. What those do depends on the strategy: a DMA, a prefetch, nothing at all.
//
// The strategy-specific buffer types are value types in src/memory; io_buffer holds one of them
// so sessions can pick the strategy at run time.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "ferry/core/device_alignment.hpp"
#include "ferry/core/stream.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/memory/strategy.hpp"

namespace ferry {

// Which way data crosses for this tensor; a copy strategy moves only what is needed.
enum class direction { input, output, inout };

struct buffer_request {
  std::size_t bytes = 0;
  direction dir = direction::inout;
  oversubscription managed_policy = oversubscription::refuse;
};

class io_buffer {
 public:
  // Allocates a buffer for `strategy` on the device described by `caps`. Throws unsupported
  // (with the reason) when the platform cannot do the strategy or a managed request does not
  // fit, invalid_argument for a zero-byte request, out_of_memory when allocation fails.
  [[nodiscard]] static io_buffer allocate(strategy_kind strategy, const buffer_request& request,
                                          const device_caps& caps);

  // Wraps memory the caller owns (a decoder's output, a socket buffer, a shared-memory region)
  // with cudaHostRegister. `strategy` must be registered or registered_mapped; request.bytes must
  // equal caller_memory.size(). The memory must outlive the buffer. Throws unsupported when the
  // memory cannot be registered, naming the CUDA error.
  [[nodiscard]] static io_buffer wrap_registered(strategy_kind strategy, std::span<std::byte> caller_memory,
                                                 const buffer_request& request, const device_caps& caps);

  io_buffer(io_buffer&&) noexcept;
  io_buffer& operator=(io_buffer&&) noexcept;
  ~io_buffer();

  [[nodiscard]] std::span<std::byte> host() noexcept;
  [[nodiscard]] std::span<const std::byte> host() const noexcept;
  [[nodiscard]] void* device_address() const noexcept;  // what the engine binds
  [[nodiscard]] std::size_t bytes() const noexcept;
  [[nodiscard]] strategy_kind strategy() const noexcept;
  [[nodiscard]] direction dir() const noexcept;
  [[nodiscard]] int device_ordinal() const noexcept;

  // Stream-ordered: make what the CPU wrote into the host view visible to the device.
  void to_device(stream_ref stream);
  // Stream-ordered: make what the device wrote visible in the host view once `stream` completes
  // and finish_to_host() has run.
  void to_host(stream_ref stream);
  // The same for the first `bytes` of the tensor only: a batch-major tensor run at fewer rows than
  // it holds (a session's smaller batch) uses a prefix, and only that crosses. Throws
  // invalid_argument when `bytes` exceeds bytes().
  void to_device(stream_ref stream, std::size_t bytes);
  void to_host(stream_ref stream, std::size_t bytes);
  // After to_host's stream work has completed: the host-side step some strategies end with
  // (staged: staging -> host view). Nothing for the others. Sessions call it in wait().
  void finish_to_host();

  // Untimed, blocking synchronisation of the host view with device memory, for the `device`
  // strategy (whose stream operations move nothing, by definition) and for reference checks.
  // For every other strategy these are to_device/to_host followed by a stream synchronize. They
  // run with the buffer's GPU current, whatever the calling thread's.
  // `bytes`: the prefix to move, as for to_device(stream, bytes); the whole tensor by default.
  void upload_blocking(stream_ref stream);
  void download_blocking(stream_ref stream);
  void upload_blocking(stream_ref stream, std::size_t bytes);
  void download_blocking(stream_ref stream, std::size_t bytes);

  struct impl;

 private:
  explicit io_buffer(std::unique_ptr<impl> impl);
  std::unique_ptr<impl> impl_;
};

}  // namespace ferry
