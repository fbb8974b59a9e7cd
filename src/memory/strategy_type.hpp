// A transfer strategy as a registered type (docs/ARCHITECTURE.md §2, §7): its name and properties,
// what it needs of the platform, how it allocates one tensor's buffer, and its request written by
// hand for the bench's recipes. Each strategy derives one in src/memory/strategies/<name>/ and is
// listed once in src/memory/strategies/registered.def; io_buffer, the public lookups of
// ferry/memory/strategy.hpp and the recipes reach it through type_of(kind), never by a switch.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ferry/device/device_caps.hpp"
#include "ferry/memory/buffer.hpp"
#include "ferry/memory/strategy.hpp"
#include "memory/buffer_body.hpp"
#include "memory/tensor_by_hand.hpp"

namespace ferry::memory {

class strategy_type {
 public:
  strategy_type(std::string_view name, strategy_properties properties) : name_(name), properties_(properties) {}
  virtual ~strategy_type() = default;
  strategy_type(const strategy_type&) = delete;
  strategy_type& operator=(const strategy_type&) = delete;

  // As --strategy, configs and reports spell it: lower case, words joined by '-'.
  [[nodiscard]] std::string_view name() const noexcept { return name_; }
  [[nodiscard]] const strategy_properties& properties() const noexcept { return properties_; }

  // Why this device cannot do the strategy (the capability named as CUDA names it), or nullopt.
  // Decided from the record alone, so it is tested on synthetic records without a GPU.
  [[nodiscard]] virtual std::optional<std::string> unavailable_reason(const device_caps& caps) const = 0;

  // One tensor's buffer of request.bytes (> 0) on the GPU of `caps`, which is current; the
  // strategy is available there. Throws unsupported or out_of_memory as io_buffer::allocate says.
  [[nodiscard]] virtual std::unique_ptr<buffer_body> allocate(const buffer_request& request,
                                                              const device_caps& caps) const = 0;
  // The same over memory the caller owns (properties().wraps_caller_memory only: the others are
  // refused before this is called).
  [[nodiscard]] virtual std::unique_ptr<buffer_body> wrap(std::span<std::byte> caller_memory,
                                                          const buffer_request& request, const device_caps& caps) const;

  // The request by hand, in words, for reports.
  [[nodiscard]] virtual std::string_view recipe_steps() const noexcept = 0;
  // One tensor of it, of `bytes` going `dir` (input or output), on the GPU of `caps`, which is current.
  [[nodiscard]] virtual std::unique_ptr<tensor_by_hand> by_hand_tensor(std::size_t bytes, direction dir,
                                                                       const device_caps& caps) const = 0;

 private:
  std::string_view name_;
  strategy_properties properties_;
};

// The registered type of `k`. Throws invalid_argument for a value no strategy was registered at.
[[nodiscard]] const strategy_type& type_of(strategy_kind k);
// The registered type of `k`, or nullptr.
[[nodiscard]] const strategy_type* find_type(strategy_kind k) noexcept;

}  // namespace ferry::memory
