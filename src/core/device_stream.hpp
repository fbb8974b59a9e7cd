// A CUDA stream that knows its GPU (as cuda-api-wrappers' stream_t does): made on that GPU whatever
// the caller's current device, and able to make it current for the work enqueued on it.
#pragma once

#include "core/scoped_device.hpp"
#include "ferry/core/stream.hpp"

namespace ferry::core {

class device_stream {
 public:
  explicit device_stream(int ordinal);

  [[nodiscard]] int ordinal() const noexcept { return ordinal_; }
  [[nodiscard]] stream_ref ref() const noexcept { return stream_.ref(); }
  operator stream_ref() const noexcept { return stream_.ref(); }  // NOLINT: usable where a ref is
  void synchronize_blocking() const { stream_.synchronize_blocking(); }
  // Makes the stream's GPU current until the returned guard ends: kernel launches, events and
  // allocations for this stream's work must be made there, whatever GPU the calling thread uses.
  [[nodiscard]] scoped_device activate() const { return scoped_device(ordinal_); }

 private:
  int ordinal_;
  stream stream_;
};

}  // namespace ferry::core
