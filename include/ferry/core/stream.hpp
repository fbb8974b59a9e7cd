// Streams and events: owning RAII types and the non-owning stream_ref every async call takes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "ferry/core/error.hpp"

namespace ferry {

// Non-owning handle to a CUDA stream. Every stream-ordered operation in ferry takes one
// explicitly; there is no hidden "current stream".
class stream_ref {
 public:
  constexpr stream_ref(cudaStream_t handle) noexcept : handle_(handle) {}  // NOLINT: implicit by design
  // A literal 0 or nullptr would be the legacy default stream, which synchronises with every
  // other blocking stream of the device: never what a slot or a recipe means, so it is refused at
  // compile time (as RMM's cuda_stream_view does). Pass a stream, or cudaStreamLegacy on purpose.
  stream_ref(int) = delete;
  stream_ref(std::nullptr_t) = delete;
  [[nodiscard]] constexpr cudaStream_t get() const noexcept { return handle_; }
  // Blocks the calling thread until all work queued so far on the stream has finished.
  void synchronize_blocking() const { FERRY_CUDA_TRY(cudaStreamSynchronize(handle_)); }

 private:
  cudaStream_t handle_;
};

// Owning, non-blocking CUDA stream (does not synchronise with the legacy default stream).
class stream {
 public:
  stream() { FERRY_CUDA_TRY(cudaStreamCreateWithFlags(&handle_, cudaStreamNonBlocking)); }
  ~stream() {
    if (handle_ != nullptr) FERRY_CUDA_TRY_NOTHROW(cudaStreamDestroy(handle_));
  }
  stream(stream&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  stream& operator=(stream&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;

  [[nodiscard]] stream_ref ref() const noexcept { return handle_; }
  operator stream_ref() const noexcept { return handle_; }  // NOLINT: a stream is usable where a ref is
  [[nodiscard]] cudaStream_t get() const noexcept { return handle_; }
  void synchronize_blocking() const { ref().synchronize_blocking(); }

 private:
  cudaStream_t handle_ = nullptr;
};

enum class event_timing { disabled, enabled };

// Owning CUDA event. Timing is off unless asked for: untimed events are cheaper to record and
// wait on, and most events only order work between streams.
class event {
 public:
  explicit event(event_timing timing = event_timing::disabled) {
    FERRY_CUDA_TRY(cudaEventCreateWithFlags(
        &handle_, timing == event_timing::enabled ? cudaEventDefault : cudaEventDisableTiming));
  }
  ~event() {
    if (handle_ != nullptr) FERRY_CUDA_TRY_NOTHROW(cudaEventDestroy(handle_));
  }
  event(event&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  event& operator=(event&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  event(const event&) = delete;
  event& operator=(const event&) = delete;

  void record(stream_ref s) { FERRY_CUDA_TRY(cudaEventRecord(handle_, s.get())); }
  // Records the event as a node of the graph `s` is capturing, so every launch of that graph
  // records it. A plain record() during capture only orders the captured work: the event itself
  // is never recorded, and waiting for it outside the graph is an error.
  void record_in_capture(stream_ref s) {
    FERRY_CUDA_TRY(cudaEventRecordWithFlags(handle_, s.get(), cudaEventRecordExternal));
  }
  void synchronize_blocking() const { FERRY_CUDA_TRY(cudaEventSynchronize(handle_)); }
  [[nodiscard]] cudaEvent_t get() const noexcept { return handle_; }

 private:
  cudaEvent_t handle_ = nullptr;
};

// Milliseconds between two recorded timing events (both must have completed).
[[nodiscard]] inline float elapsed_ms(const event& start, const event& stop) {
  float ms = 0.0F;
  FERRY_CUDA_TRY(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms;
}

}  // namespace ferry
