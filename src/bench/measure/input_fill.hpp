// What a client's CPU does around a request: writes fresh input as a real client would (the
// values of ferry/session/input_data.hpp: random finite floats, integer indices inside the engine's
// index_bound, zeros where nothing says which values an integer takes, or the user's own), and
// reads every byte of the outputs.
#pragma once

#include <cstdint>
#include <span>

#include "ferry/bench/run_options.hpp"  // input_writes
#include "ferry/engines/engine.hpp"
#include "ferry/session/input_data.hpp"

namespace ferry::bench {

// Writes every byte of `host` with `data`'s values for request `seed` (bound to the engine's I/O:
// input_data::bound_to), with ordinary or streaming stores (the same bytes either way). Fast
// enough (several GB/s) that filling 64 MB does not dominate a benchmark's wall time.
void fill_fresh(std::span<std::byte> host, const tensor_spec& spec, std::uint64_t seed, input_writes writes,
                const input_data& data);

// Reads every byte of an output the way a client consuming it would, eight at a time; the sum
// keeps the compiler from dropping the reads.
[[nodiscard]] std::uint64_t read_every_byte(std::span<const std::byte> output) noexcept;

}  // namespace ferry::bench
