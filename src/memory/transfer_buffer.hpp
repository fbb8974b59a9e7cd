// The concept every strategy's buffer type satisfies; io_buffer holds one of them.
#pragma once

#include <concepts>
#include <cstddef>
#include <span>

#include "ferry/core/stream.hpp"
#include "ferry/memory/buffer.hpp"

namespace ferry::memory {

// to_device and to_host move the first `bytes` of the tensor (io_buffer checked that they are
// inside it): the rows a smaller batch uses are a prefix of a batch-major tensor, and a run at a
// smaller batch moves only those.
template <class B>
concept transfer_buffer = std::movable<B> && requires(B& b, const B& cb, stream_ref s, std::size_t bytes) {
  { b.host() } -> std::same_as<std::span<std::byte>>;
  { cb.device_address() } -> std::same_as<void*>;
  b.to_device(s, bytes);
  b.to_host(s, bytes);
};

// Whether a direction needs data moved towards the device, or back to the host.
[[nodiscard]] constexpr bool moves_in(direction d) noexcept { return d != direction::output; }
[[nodiscard]] constexpr bool moves_out(direction d) noexcept { return d != direction::input; }

}  // namespace ferry::memory
