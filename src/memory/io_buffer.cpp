// io_buffer: picks the strategy's buffer type at run time and forwards to it.
#include "ferry/memory/buffer.hpp"

#include <string>
#include <variant>

#include "core/device_memory.hpp"
#include "core/host_registration.hpp"
#include "core/managed_memory.hpp"
#include "core/mapped_device_pointer.hpp"
#include "core/pageable_memory.hpp"
#include "core/pinned_memory.hpp"
#include "core/scoped_device.hpp"
#include "memory/alignment_check.hpp"
#include "memory/copy_buffer.hpp"
#include "memory/managed_buffer.hpp"
#include "memory/resident_buffer.hpp"
#include "memory/staged_buffer.hpp"
#include "memory/zero_copy_buffer.hpp"

namespace ferry {

using memory::copy_buffer;
using memory::managed_buffer;
using memory::resident_buffer;
using memory::staged_buffer;
using memory::zero_copy_buffer;

struct io_buffer::impl {
  std::variant<copy_buffer, staged_buffer, zero_copy_buffer, managed_buffer, resident_buffer> body;
  strategy_kind strategy;
  direction dir;
  std::size_t bytes;
  int ordinal;
};

namespace {

// Host memory is pinned or registered "portable": page-locked for every GPU of the process, not
// only the one current at allocation. A replica set allocates each session's buffers with that
// session's GPU current, but host memory outlives that choice (a registered client buffer, a
// shared region) and another GPU may copy from it or map it; without the flag it would be
// pageable memory as far as the other GPUs are concerned (slow copies, failed mappings).
constexpr unsigned int pinned_flags = cudaHostAllocPortable;
constexpr unsigned int mapped_flags = cudaHostAllocMapped | cudaHostAllocPortable;
constexpr unsigned int register_flags = cudaHostRegisterPortable;
constexpr unsigned int register_mapped_flags = cudaHostRegisterMapped | cudaHostRegisterPortable;

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

memory::managed_mode managed_mode_of(strategy_kind k) {
  switch (k) {
    case strategy_kind::managed_prefetch:
      return memory::managed_mode::prefetch;
    case strategy_kind::managed_advise:
      return memory::managed_mode::advise;
    default:
      return memory::managed_mode::fault_driven;
  }
}

// Builds the registered kinds over `view`; `owned` holds the memory when ferry allocated it.
decltype(io_buffer::impl::body) make_registered(strategy_kind strategy, std::span<std::byte> view,
                                                core::pageable_memory owned, const buffer_request& request) {
  if (strategy == strategy_kind::registered) {
    auto registration = core::register_host(view, register_flags);
    return copy_buffer(copy_buffer::registered_host{std::move(owned), std::move(registration)}, view,
                       core::allocate_device(request.bytes), request.dir);
  }
  auto registration = core::register_host(view, register_mapped_flags);
  void* device_view = core::mapped_device_pointer(view.data());
  memory::require_device_alignment(device_view, "registered-mapped caller memory");
  return zero_copy_buffer(copy_buffer::registered_host{std::move(owned), std::move(registration)}, view, device_view);
}

}  // namespace

io_buffer io_buffer::allocate(strategy_kind strategy, const buffer_request& request, const device_caps& caps) {
  require_request(request);
  require_available(strategy, caps);
  // Device memory (cudaMalloc) belongs to the current device: make it the buffer's own GPU.
  core::scoped_device on_device(caps.ordinal);
  const std::size_t n = request.bytes;

  auto body = [&]() -> decltype(impl::body) {
    switch (strategy) {
      case strategy_kind::pageable: {
        auto host = core::allocate_pageable(n);
        auto view = host.span();
        return copy_buffer(std::move(host), view, core::allocate_device(n), request.dir);
      }
      case strategy_kind::pinned: {
        auto host = core::allocate_pinned(n, pinned_flags);
        auto view = host.span();
        return copy_buffer(std::move(host), view, core::allocate_device(n), request.dir);
      }
      case strategy_kind::staged:
        return staged_buffer(core::allocate_pageable(n), core::allocate_pinned(n, pinned_flags),
                             core::allocate_device(n), request.dir);
      case strategy_kind::mapped: {
        auto host = core::allocate_pinned(n, mapped_flags);
        auto view = host.span();
        void* device_view = core::mapped_device_pointer(host.get());
        return zero_copy_buffer(std::move(host), view, device_view);
      }
      case strategy_kind::registered:
      case strategy_kind::registered_mapped: {
        // No caller memory given: stand in for it with page-aligned pageable memory, which is
        // what a decoder or a shared-memory region would hand over.
        auto owned = core::allocate_pageable(n);
        auto view = owned.span();
        return make_registered(strategy, view, std::move(owned), request);
      }
      case strategy_kind::managed:
      case strategy_kind::managed_prefetch:
      case strategy_kind::managed_advise: {
        if (auto refusal = managed_request_refusal(n, query_free_memory(caps.ordinal), request.managed_policy))
          throw unsupported("strategy '" + std::string(to_string(strategy)) + "': " + *refusal);
        // Prefetches and accessed-by advice target the buffer's own GPU (caps.ordinal), never
        // device 0: on a multi-GPU host each replica's pages must end up where it computes.
        return managed_buffer(core::allocate_managed(n), managed_mode_of(strategy), request.dir, caps.ordinal);
      }
      case strategy_kind::system: {
        auto host = core::allocate_pageable(n);
        auto view = host.span();
        return zero_copy_buffer(std::move(host), view, view.data());
      }
      case strategy_kind::device:
        return resident_buffer(core::allocate_pinned(n, pinned_flags), core::allocate_device(n));
    }
    throw invalid_argument("unknown strategy");
  }();
  return io_buffer(std::make_unique<impl>(impl{std::move(body), strategy, request.dir, n, caps.ordinal}));
}

io_buffer io_buffer::wrap_registered(strategy_kind strategy, std::span<std::byte> caller_memory,
                                     const buffer_request& request, const device_caps& caps) {
  if (!properties(strategy).wraps_caller_memory)
    throw invalid_argument("strategy '" + std::string(to_string(strategy)) +
                           "' cannot wrap caller memory; use registered or registered-mapped");
  require_request(request);
  if (caller_memory.size() != request.bytes)
    throw invalid_argument("caller memory is " + std::to_string(caller_memory.size()) +
                           " bytes but the request is for " + std::to_string(request.bytes));
  require_available(strategy, caps);
  core::scoped_device on_device(caps.ordinal);
  auto body = make_registered(strategy, caller_memory, {}, request);
  return io_buffer(std::make_unique<impl>(impl{std::move(body), strategy, request.dir, request.bytes, caps.ordinal}));
}

io_buffer::io_buffer(std::unique_ptr<impl> impl) : impl_(std::move(impl)) {}
io_buffer::io_buffer(io_buffer&&) noexcept = default;
io_buffer& io_buffer::operator=(io_buffer&&) noexcept = default;
io_buffer::~io_buffer() = default;

std::span<std::byte> io_buffer::host() noexcept {
  return std::visit([](auto& b) { return b.host(); }, impl_->body);
}
std::span<const std::byte> io_buffer::host() const noexcept {
  return const_cast<io_buffer*>(this)->host();  // the views differ only in constness
}
void* io_buffer::device_address() const noexcept {
  return std::visit([](const auto& b) { return b.device_address(); }, impl_->body);
}
std::size_t io_buffer::bytes() const noexcept { return impl_->bytes; }
strategy_kind io_buffer::strategy() const noexcept { return impl_->strategy; }
direction io_buffer::dir() const noexcept { return impl_->dir; }
int io_buffer::device_ordinal() const noexcept { return impl_->ordinal; }

void io_buffer::to_device(stream_ref stream) { to_device(stream, impl_->bytes); }
void io_buffer::to_host(stream_ref stream) { to_host(stream, impl_->bytes); }

void io_buffer::to_device(stream_ref stream, std::size_t bytes) {
  require_prefix(bytes, impl_->bytes);
  std::visit([stream, bytes](auto& b) { b.to_device(stream, bytes); }, impl_->body);
}
void io_buffer::to_host(stream_ref stream, std::size_t bytes) {
  require_prefix(bytes, impl_->bytes);
  std::visit([stream, bytes](auto& b) { b.to_host(stream, bytes); }, impl_->body);
}

void io_buffer::finish_to_host() {
  if (auto* staged = std::get_if<staged_buffer>(&impl_->body)) staged->finish_to_host();
}

void io_buffer::upload_blocking(stream_ref stream) { upload_blocking(stream, impl_->bytes); }
void io_buffer::download_blocking(stream_ref stream) { download_blocking(stream, impl_->bytes); }

void io_buffer::upload_blocking(stream_ref stream, std::size_t bytes) {
  require_prefix(bytes, impl_->bytes);
  const core::scoped_device on_device(impl_->ordinal);  // the copy runs on the buffer's own GPU
  if (auto* resident = std::get_if<resident_buffer>(&impl_->body))
    resident->upload(stream, bytes);
  else
    to_device(stream, bytes);
  stream.synchronize_blocking();
}

void io_buffer::download_blocking(stream_ref stream, std::size_t bytes) {
  require_prefix(bytes, impl_->bytes);
  const core::scoped_device on_device(impl_->ordinal);
  if (auto* resident = std::get_if<resident_buffer>(&impl_->body))
    resident->download(stream, bytes);
  else
    to_host(stream, bytes);
  stream.synchronize_blocking();
  finish_to_host();
}

}  // namespace ferry
