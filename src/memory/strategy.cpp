#include "ferry/memory/strategy.hpp"
#include "ferry/core/byte_size.hpp"

#include <algorithm>

#include "ferry/core/error.hpp"

namespace ferry {

namespace {
struct strategy_entry {
  strategy_kind kind;
  std::string_view name;
  strategy_properties props;
};

// The single table behind names, properties and parsing, in docs/ARCHITECTURE.md §2 order.
constexpr std::array<strategy_entry, all_strategies.size()> table{{
    {strategy_kind::pageable,
     "pageable",
     {data_path::copy, false, false, "malloc + cudaMalloc; cudaMemcpyAsync from pageable memory",
      "the driver copies pageable memory through its own pinned buffer with the CPU while the copy runs"}},
    {strategy_kind::staged,
     "staged",
     {data_path::copy, false, false, "malloc + pinned staging + cudaMalloc; memcpy to staging, then DMA (most servers)",
      "the CPU's memcpy into the staging buffer comes between the request's first event and its DMA"}},
    {strategy_kind::pinned, "pinned", {data_path::copy, false, false, "cudaMallocHost + cudaMalloc; DMA both ways"}},
    {strategy_kind::mapped,
     "mapped",
     {data_path::zero_copy, false, false,
      "cudaHostAlloc(Mapped); the device reads and writes host memory over the link"}},
    {strategy_kind::registered,
     "registered",
     {data_path::copy, false, true, "caller's memory + cudaHostRegister; DMA into device memory"}},
    {strategy_kind::registered_mapped,
     "registered-mapped",
     {data_path::zero_copy, false, true, "caller's memory + cudaHostRegister(Mapped); the device reads it in place"}},
    {strategy_kind::managed,
     "managed",
     {data_path::migrate, true, false, "cudaMallocManaged, no hints; pages migrate on fault",
      "the GPU's page faults are serviced by the driver on the CPU"}},
    {strategy_kind::managed_prefetch,
     "managed-prefetch",
     {data_path::migrate, true, false,
      "cudaMallocManaged; inputs cudaMemPrefetchAsync'd to the GPU before the engine, outputs "
      "advised to host pages the GPU writes over the link",
      "the driver unmaps the prefetched pages from the host on the CPU before they move"}},
    {strategy_kind::managed_advise,
     "managed-advise",
     {data_path::migrate, true, false, "cudaMallocManaged + preferred location host + accessed-by GPU"}},
    {strategy_kind::system,
     "system",
     {data_path::zero_copy, false, false, "plain malloc read by the device through HMM/ATS (pageableMemoryAccess=1)",
      "the GPU's faults on host pages are serviced by the kernel's HMM on the CPU"}},
    {strategy_kind::device,
     "device",
     {data_path::resident, false, false, "device-resident data, copied outside timing: the floor to measure against"}},
}};

const strategy_entry& entry(strategy_kind k) noexcept {
  return *std::find_if(table.begin(), table.end(), [k](const auto& e) { return e.kind == k; });
}

std::string valid_names() {
  std::string names;
  for (const auto& e : table) {
    if (!names.empty()) names += ", ";
    names += e.name;
  }
  return names;
}
}  // namespace

std::string_view to_string(strategy_kind k) noexcept { return entry(k).name; }
strategy_properties properties(strategy_kind k) noexcept { return entry(k).props; }

strategy_kind parse_strategy(std::string_view name) {
  for (const auto& e : table)
    if (e.name == name) return e.kind;
  throw invalid_argument("unknown strategy '" + std::string(name) + "'; valid: " + valid_names());
}

std::vector<strategy_kind> parse_strategy_list(std::string_view text) {
  if (text == "all") return {all_strategies.begin(), all_strategies.end()};
  std::vector<strategy_kind> out;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const auto item = text.substr(0, comma);
    if (item.empty()) throw invalid_argument("empty strategy name in list");
    const auto kind = parse_strategy(item);
    if (std::find(out.begin(), out.end(), kind) == out.end()) out.push_back(kind);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
    if (text.empty()) throw invalid_argument("empty strategy name in list");
  }
  if (out.empty()) throw invalid_argument("no strategy given");
  return out;
}

std::optional<std::string> unavailable_reason(strategy_kind k, const device_caps& caps) {
  switch (k) {
    case strategy_kind::pageable:
    case strategy_kind::staged:
    case strategy_kind::pinned:
    case strategy_kind::device:
      return std::nullopt;
    case strategy_kind::mapped:
      if (!caps.can_map_host_memory) return "the device cannot map host memory (canMapHostMemory=0)";
      return std::nullopt;
    case strategy_kind::registered:
      if (!caps.host_register_supported)
        return "the device does not support cudaHostRegister (hostRegisterSupported=0)";
      return std::nullopt;
    case strategy_kind::registered_mapped:
      if (!caps.host_register_supported)
        return "the device does not support cudaHostRegister (hostRegisterSupported=0)";
      if (!caps.can_map_host_memory) return "the device cannot map host memory (canMapHostMemory=0)";
      return std::nullopt;
    case strategy_kind::managed:
    case strategy_kind::managed_prefetch:
    case strategy_kind::managed_advise:
      if (!caps.managed_memory) return "the device has no managed memory (managedMemory=0)";
      // Without concurrent access the CPU may not touch any managed page while a kernel runs,
      // which rules out filling slot k+1 while slot k computes.
      if (!caps.concurrent_managed_access)
        return "the CPU cannot access managed memory while kernels run "
               "(concurrentManagedAccess=0), which pipelined slots need";
      return std::nullopt;
    case strategy_kind::system:
      if (!caps.pageable_memory_access)
        return "the device cannot access pageable host memory (pageableMemoryAccess=0: no HMM "
               "or ATS on this platform)";
      return std::nullopt;
  }
  return "unknown strategy";
}

std::optional<std::string> managed_request_refusal(std::size_t bytes, std::size_t free_bytes, oversubscription policy) {
  if (policy == oversubscription::allow) return std::nullopt;
  if (bytes + managed_headroom_bytes <= free_bytes) return std::nullopt;
  return "managed request of " + format_byte_size(bytes) + " does not fit in the device's free memory (" +
         format_byte_size(free_bytes) + ", keeping " + format_byte_size(managed_headroom_bytes) +
         " headroom); oversubscription can stall every process on a shared GPU, so it is refused unless "
         "explicitly allowed";
}

}  // namespace ferry
