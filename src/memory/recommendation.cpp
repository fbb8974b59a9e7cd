#include "ferry/memory/recommendation.hpp"

#include <array>

namespace ferry {
namespace {

using enum strategy_kind;

// Discrete GPU over PCIe. Why, in order: pinned DMA reaches the link's ceiling; mapped reads
// the link once per kernel read, so it ties for read-once inputs only; managed-advise is
// zero-copy in disguise; pageable bounces through a driver buffer; fault-driven managed migrates
// page by page; a CPU reading a managed output pays a slow migration back even when prefetched
// (docs/RESULTS.md has one machine's figures; `ferry calibrate` measures the user's own).
constexpr std::array discrete_alternatives{mapped, managed_advise, registered};
constexpr std::array discrete_avoid{pageable, managed, managed_prefetch};
constexpr std::string_view discrete_reasoning =
    "Discrete GPU over PCIe: host and device memories are separate, so every byte crosses the "
    "link whatever the strategy. Pinned copies run at the link's ceiling and, with at least 2 "
    "in-flight slots, the copy of the next request hides behind the compute of the current one. "
    "Mapped zero-copy costs about the same for inputs the kernel reads once, but a kernel that "
    "re-reads its input pays the link on every read; managed-advise behaves like mapped. Pageable "
    "copies bounce through a driver staging buffer and fault-driven managed memory migrates page "
    "by page: both are several times slower. Never let the CPU read a managed output: it is slower "
    "than a pinned D2H copy even after prefetching it back.";

// Integrated GPU (Jetson, DRIVE): the GPU uses the host's DRAM. A "copy to the device" copies
// DRAM to DRAM and buys nothing, so zero-copy is the floor: mapped memory (or registered memory
// the caller already has) is read in place. Managed memory does not migrate either, but Jetson
// reports concurrentManagedAccess=0, so ferry refuses it where pipelined slots need CPU access
// during kernels; where a device allows it, managed is an equal choice.
constexpr std::array integrated_alternatives{registered_mapped, managed};
constexpr std::array integrated_avoid{pageable, staged, pinned, registered, managed_prefetch};
constexpr std::string_view integrated_reasoning =
    "Integrated GPU: the GPU shares the host's DRAM, so there is nothing to transfer. Copies "
    "(pageable, staged, pinned, registered) move bytes from DRAM to DRAM and are pure overhead, "
    "and prefetching managed memory moves nothing useful. Use zero-copy: mapped host memory, or "
    "the caller's own memory registered as mapped, which the kernel reads in place; managed "
    "memory is equivalent where the device allows concurrent managed access. Keep 2 in-flight "
    "slots so the CPU writes the next input while the GPU reads the current one.";

// Coherent HMM: a discrete GPU (pageableMemoryAccess=1 through the kernel's Heterogeneous Memory
// Management, no hardware coherence). The GPU may touch malloc'd memory, but each touch faults
// and migrates the page over PCIe, which is the fault-driven managed path again. The link is still PCIe, so pinned
// copies and the discrete advice hold.
constexpr std::array hmm_alternatives{mapped, managed_advise, registered};
constexpr std::array hmm_avoid{pageable, system, managed, managed_prefetch};
constexpr std::string_view hmm_reasoning =
    "Coherent through HMM: the GPU may access pageable host memory, but pages migrate on fault "
    "over the same PCIe link, so 'system' (plain malloc) behaves like fault-driven managed "
    "memory, several times slower than pinned copies. Pinned copies with at least 2 in-flight "
    "slots still win and hide behind compute; mapped is about equal for inputs read once and "
    "managed-advise behaves like mapped. Never let the CPU read a managed output: it is slower "
    "than a pinned D2H copy even after a prefetch.";

// Coherent ATS (Grace Hopper, NVLink-C2C): the GPU uses the CPU's page tables over a coherent
// link several times faster than PCIe, so it reads plain malloc'd memory in place (system) and
// managed memory with host-preferred placement is read in place too. Copies still work but add
// a pass over the data; prefetching managed pages back and forth moves what could be read in
// place.
constexpr std::array ats_alternatives{managed_advise, mapped, pinned};
constexpr std::array ats_avoid{pageable, staged, managed_prefetch};
constexpr std::string_view ats_reasoning =
    "Coherent through ATS (Grace Hopper, NVLink-C2C): the GPU translates addresses with the "
    "CPU's page tables over a cache-coherent link far faster than PCIe, so the kernel reads "
    "system memory (plain malloc) or managed memory in place with no copy and no fault-driven "
    "migration. Pinned copies remain a sound baseline; staging through an extra buffer or "
    "prefetching managed pages back and forth only adds passes over the data. Keep 2 in-flight "
    "slots so the CPU fills the next input while the GPU reads the current one.";

}  // namespace

recommendation recommendation_for(platform_class platform) noexcept {
  switch (platform) {
    case platform_class::discrete_pcie:
      return {platform, pinned, discrete_alternatives, discrete_avoid, 2, discrete_reasoning};
    case platform_class::integrated:
      return {platform, mapped, integrated_alternatives, integrated_avoid, 2, integrated_reasoning};
    case platform_class::coherent_hmm:
      return {platform, pinned, hmm_alternatives, hmm_avoid, 2, hmm_reasoning};
    case platform_class::coherent_ats:
      return {platform, system, ats_alternatives, ats_avoid, 2, ats_reasoning};
  }
  // Unreachable for valid enumerators; the safe default is the discrete advice.
  return {platform, pinned, discrete_alternatives, discrete_avoid, 2, discrete_reasoning};
}

}  // namespace ferry
