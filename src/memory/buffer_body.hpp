// What io_buffer holds: one strategy's buffer behind a small virtual interface, so a strategy
// registered in its own folder brings its own buffer type and io_buffer dispatches to it without
// knowing it (ggml's buffer interface, RMM's resources).
//
// A strategy writes its buffer as a value type satisfying transfer_buffer and hands it over with
// make_body(); the optional steps (finish_to_host, the blocking upload and download of resident
// data) are found by their presence.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <utility>

#include "ferry/core/stream.hpp"
#include "memory/transfer_buffer.hpp"

namespace ferry::memory {

class buffer_body {
 public:
  virtual ~buffer_body() = default;
  buffer_body() = default;
  buffer_body(const buffer_body&) = delete;
  buffer_body& operator=(const buffer_body&) = delete;

  [[nodiscard]] virtual std::span<std::byte> host() noexcept = 0;
  [[nodiscard]] virtual void* device_address() const noexcept = 0;
  // The first `bytes` of the tensor (io_buffer checked they are inside it), stream-ordered.
  virtual void to_device(stream_ref s, std::size_t bytes) = 0;
  virtual void to_host(stream_ref s, std::size_t bytes) = 0;
  // After to_host's stream work has completed: the host-side step some buffers end with.
  virtual void finish_to_host() = 0;
  // The copies io_buffer's blocking calls make: to_device and to_host, except for data kept in
  // device memory, whose stream operations move nothing and which copies here instead.
  virtual void upload(stream_ref s, std::size_t bytes) = 0;
  virtual void download(stream_ref s, std::size_t bytes) = 0;
};

template <transfer_buffer B>
class body_of final : public buffer_body {
 public:
  explicit body_of(B buffer) : buffer_(std::move(buffer)) {}

  [[nodiscard]] std::span<std::byte> host() noexcept override { return buffer_.host(); }
  [[nodiscard]] void* device_address() const noexcept override { return buffer_.device_address(); }
  void to_device(stream_ref s, std::size_t bytes) override { buffer_.to_device(s, bytes); }
  void to_host(stream_ref s, std::size_t bytes) override { buffer_.to_host(s, bytes); }
  void finish_to_host() override {
    if constexpr (requires { buffer_.finish_to_host(); }) buffer_.finish_to_host();
  }
  void upload(stream_ref s, std::size_t bytes) override {
    if constexpr (requires { buffer_.upload(s, bytes); })
      buffer_.upload(s, bytes);
    else
      buffer_.to_device(s, bytes);
  }
  void download(stream_ref s, std::size_t bytes) override {
    if constexpr (requires { buffer_.download(s, bytes); })
      buffer_.download(s, bytes);
    else
      buffer_.to_host(s, bytes);
  }

 private:
  B buffer_;
};

template <transfer_buffer B>
[[nodiscard]] std::unique_ptr<buffer_body> make_body(B buffer) {
  return std::make_unique<body_of<B>>(std::move(buffer));
}

}  // namespace ferry::memory
