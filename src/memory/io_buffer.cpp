// io_buffer: the registered type of its strategy allocates the buffer; io_buffer checks the
// request, makes the buffer's GPU current and forwards to the buffer's body.
#include "ferry/memory/buffer.hpp"

#include <string>

#include "core/scoped_device.hpp"
#include "memory/buffer_body.hpp"
#include "memory/strategy_type.hpp"

namespace ferry {

struct io_buffer::impl {
  std::unique_ptr<memory::buffer_body> body;
  strategy_kind strategy;
  direction dir;
  std::size_t bytes;
  int ordinal;
};

namespace {

void require_available(strategy_kind strategy, const device_caps& caps) {
  if (auto reason = unavailable_reason(strategy, caps))
    throw unsupported("strategy '" + std::string(to_string(strategy)) + "' is not available on " + caps.name +
                      " (GPU " + std::to_string(caps.ordinal) + "): " + *reason);
}

void require_request(const buffer_request& request) {
  if (request.bytes == 0) throw invalid_argument("buffer request of 0 bytes");
}

void require_prefix(std::size_t bytes, std::size_t size) {
  if (bytes > size)
    throw invalid_argument("a transfer of " + std::to_string(bytes) + " bytes leaves the " + std::to_string(size) +
                           "-byte buffer");
}

}  // namespace

io_buffer io_buffer::allocate(strategy_kind strategy, const buffer_request& request, const device_caps& caps) {
  require_request(request);
  const memory::strategy_type& type = memory::type_of(strategy);
  require_available(strategy, caps);
  // Device memory (cudaMalloc) belongs to the current device: make it the buffer's own GPU.
  core::scoped_device on_device(caps.ordinal);
  auto body = type.allocate(request, caps);
  return io_buffer(std::make_unique<impl>(impl{std::move(body), strategy, request.dir, request.bytes, caps.ordinal}));
}

io_buffer io_buffer::wrap_registered(strategy_kind strategy, std::span<std::byte> caller_memory,
                                     const buffer_request& request, const device_caps& caps) {
  const memory::strategy_type& type = memory::type_of(strategy);
  if (!type.properties().wraps_caller_memory)
    throw invalid_argument("strategy '" + std::string(type.name()) +
                           "' cannot wrap caller memory; use registered or registered-mapped");
  require_request(request);
  if (caller_memory.size() != request.bytes)
    throw invalid_argument("caller memory is " + std::to_string(caller_memory.size()) +
                           " bytes but the request is for " + std::to_string(request.bytes));
  require_available(strategy, caps);
  core::scoped_device on_device(caps.ordinal);
  auto body = type.wrap(caller_memory, request, caps);
  return io_buffer(std::make_unique<impl>(impl{std::move(body), strategy, request.dir, request.bytes, caps.ordinal}));
}

io_buffer::io_buffer(std::unique_ptr<impl> impl) : impl_(std::move(impl)) {}
io_buffer::io_buffer(io_buffer&&) noexcept = default;
io_buffer& io_buffer::operator=(io_buffer&&) noexcept = default;
io_buffer::~io_buffer() = default;

std::span<std::byte> io_buffer::host() noexcept { return impl_->body->host(); }
std::span<const std::byte> io_buffer::host() const noexcept { return impl_->body->host(); }
void* io_buffer::device_address() const noexcept { return impl_->body->device_address(); }
std::size_t io_buffer::bytes() const noexcept { return impl_->bytes; }
strategy_kind io_buffer::strategy() const noexcept { return impl_->strategy; }
direction io_buffer::dir() const noexcept { return impl_->dir; }
int io_buffer::device_ordinal() const noexcept { return impl_->ordinal; }

void io_buffer::to_device(stream_ref stream) { to_device(stream, impl_->bytes); }
void io_buffer::to_host(stream_ref stream) { to_host(stream, impl_->bytes); }

void io_buffer::to_device(stream_ref stream, std::size_t bytes) {
  require_prefix(bytes, impl_->bytes);
  impl_->body->to_device(stream, bytes);
}
void io_buffer::to_host(stream_ref stream, std::size_t bytes) {
  require_prefix(bytes, impl_->bytes);
  impl_->body->to_host(stream, bytes);
}

void io_buffer::finish_to_host() { impl_->body->finish_to_host(); }

void io_buffer::upload_blocking(stream_ref stream) { upload_blocking(stream, impl_->bytes); }
void io_buffer::download_blocking(stream_ref stream) { download_blocking(stream, impl_->bytes); }

void io_buffer::upload_blocking(stream_ref stream, std::size_t bytes) {
  require_prefix(bytes, impl_->bytes);
  const core::scoped_device on_device(impl_->ordinal);  // the copy runs on the buffer's own GPU
  impl_->body->upload(stream, bytes);
  stream.synchronize_blocking();
}

void io_buffer::download_blocking(stream_ref stream, std::size_t bytes) {
  require_prefix(bytes, impl_->bytes);
  const core::scoped_device on_device(impl_->ordinal);
  impl_->body->download(stream, bytes);
  stream.synchronize_blocking();
  impl_->body->finish_to_host();
}

}  // namespace ferry
