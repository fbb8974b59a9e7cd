// What a request body being received holds of the in-flight budget (request_intake.hpp): the
// bytes that have arrived and a step ahead of them, never the length the request announced. A
// client that announces a body of the whole budget and sends it a trickle at a time holds what it
// has sent, not what it promised, so it cannot keep others out by announcing.
//
// The step ahead is one read (read_chunk_bytes), or an eighth of what has arrived when that is
// more, and never more than `max_step` (a small part of the budget, so that a small budget is not
// spent on steps): a body that arrives fast takes its bytes in few, growing steps (a lock of the
// intake each), and one that has sent little holds little.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace ferry::serve {

// Beast reads as much as the buffer has room for, up to 64 KiB at a time.
inline constexpr std::size_t read_chunk_bytes = 64 * 1024;

// What a body that has `received` bytes and holds `held` should hold from now on: `held` while
// the next read fits in it, else a step ahead of `received`; never past `announced` (its
// Content-Length; none for a chunked body).
[[nodiscard]] std::size_t body_bytes_to_hold(std::size_t received, std::size_t held,
                                             std::optional<std::uint64_t> announced,
                                             std::size_t max_step = SIZE_MAX) noexcept;

}  // namespace ferry::serve
