// The host<->device transfer strategies of docs/ARCHITECTURE.md §2: names, properties and availability.
//
// Strategies are an open set: each is a registered type in src/memory/strategies/<name>/ (its name,
// properties, what it needs of the platform, how it allocates a buffer and how its request is
// written by hand for the bench's recipes), listed once in src/memory/strategies/registered.def. A
// strategy is named by a strategy_kind value; the memory it needs lives in io_buffer (buffer.hpp).
// Availability is decided from a device_caps record, so the refusal paths are testable without a GPU.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/device/device_caps.hpp"

namespace ferry {

// A registered strategy. The built-ins are named here, at the values the registry gives them (the
// first eleven lines of its list); a strategy registered after them has a value but no name here:
// it is reached by its name (parse_strategy) and listed by all_strategies, and code that names a
// built-in reads as it always has. The underlying type is fixed, so every value of it is a valid
// strategy_kind and a registered one needs no enumerator.
enum class strategy_kind : std::uint8_t {
  pageable,           // malloc + cudaMalloc, cudaMemcpyAsync from pageable memory
  staged,             // malloc + pinned staging + cudaMalloc: memcpy to staging, then DMA
  pinned,             // cudaMallocHost + cudaMalloc, DMA both ways
  mapped,             // cudaHostAlloc(Mapped): the device reads and writes host memory over the bus
  registered,         // caller's memory + cudaHostRegister, DMA into device memory
  registered_mapped,  // caller's memory + cudaHostRegister(Mapped), the device reads it in place
  managed,            // cudaMallocManaged, no hints: pages move on fault
  managed_prefetch,   // cudaMallocManaged: inputs prefetched to the GPU, outputs kept in host pages
  managed_advise,     // cudaMallocManaged + preferred location host + accessed-by GPU
  system,             // plain malloc read by the device; needs pageableMemoryAccess (HMM/ATS)
  device,             // device-resident data: the floor every other strategy is measured against
};

// Every registered strategy, in the registry's order (the built-ins first): what `--strategy all`
// runs and `ferry info` lists. Read as a constant array (range-for, size(), [i]); the registry
// behind it is filled once, on first use.
struct strategy_list {
  using value_type = strategy_kind;
  using const_iterator = const strategy_kind*;
  using iterator = const_iterator;
  [[nodiscard]] std::span<const strategy_kind> view() const noexcept;
  [[nodiscard]] const strategy_kind* begin() const noexcept { return view().data(); }
  [[nodiscard]] const strategy_kind* end() const noexcept { return view().data() + view().size(); }
  [[nodiscard]] std::size_t size() const noexcept { return view().size(); }
  [[nodiscard]] strategy_kind operator[](std::size_t i) const noexcept { return view()[i]; }
};
inline constexpr strategy_list all_strategies{};

// How the bytes reach the memory the engine reads.
enum class data_path {
  copy,       // to_device/to_host copy between a host view and device memory
  zero_copy,  // the device accesses host memory in place over the link
  migrate,    // managed pages move between host and device (on fault or on prefetch)
  resident,   // device memory; the host view is only synchronised by the untimed blocking calls
};

// What a strategy is, for the code that decides by it (choose, the session's stages, the bench's
// loops and verdicts): never by its name.
struct strategy_properties {
  data_path path = data_path::copy;
  bool uses_managed_memory = false;  // subject to the free-memory guard
  bool wraps_caller_memory = false;  // registered kinds: the caller may hand in its own memory
  // The engine reads an input where the strategy leaves it, over a link (zero-copy, managed
  // memory kept in host pages, another GPU's memory), so only the bytes it reads cross; the
  // others move the whole tensor first.
  bool reads_in_place = false;
  std::string_view summary;
  // Where the host's CPU does part of the transfer inside a request's GPU span (the time between
  // its first and last CUDA event), how; empty where the span is the GPU's and its copy engines'
  // alone. A figure of such a span moves with the host as end-to-end latency does.
  std::string_view host_in_gpu_span = {};
};

// A registered strategy's name ("unregistered" for a value the registry does not hold) and
// properties (a copy strategy's defaults for such a value: never reached through the parsers).
[[nodiscard]] std::string_view to_string(strategy_kind k) noexcept;
[[nodiscard]] strategy_properties properties(strategy_kind k) noexcept;

// One tensor that goes another way than its session's strategy (session_options::tensor_strategies,
// choose_per_tensor): a model's small inputs read in place, its large ones copied, its outputs
// another way again.
struct tensor_strategy {
  std::string tensor;
  strategy_kind strategy = strategy_kind::pinned;
  friend bool operator==(const tensor_strategy&, const tensor_strategy&) = default;
};

// Parses one strategy name ("pinned", "managed-prefetch", ...). Throws invalid_argument that
// lists the valid names.
[[nodiscard]] strategy_kind parse_strategy(std::string_view name);

// Parses a comma-separated list or "all" (every registered strategy, in all_strategies order).
[[nodiscard]] std::vector<strategy_kind> parse_strategy_list(std::string_view text);

// Whether managed requests may exceed the device's free memory. Off by default: on a shared GPU
// oversubscription can stall every process on the card, so it must be asked for by name.
enum class oversubscription { refuse, allow };

// Returns why the strategy cannot work on this device, or nullopt when it can: what the strategy
// needs of the platform, asked of its registered type. Only capability checks live here; size
// checks need the request (see managed_request_refusal).
[[nodiscard]] std::optional<std::string> unavailable_reason(strategy_kind k, const device_caps& caps);

// Managed memory kept free for the driver and other buffers when guarding requests.
inline constexpr std::size_t managed_headroom_bytes = std::size_t{256} << 20;

// Returns why a managed request of `bytes` is refused given `free_bytes` on the device, or
// nullopt when it fits (or oversubscription is explicitly allowed).
[[nodiscard]] std::optional<std::string> managed_request_refusal(std::size_t bytes, std::size_t free_bytes,
                                                                 oversubscription policy);

}  // namespace ferry
