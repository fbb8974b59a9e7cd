// The public face of the registered strategies (ferry/memory/strategy.hpp): names, properties,
// parsing and availability, each asked of the strategy's registered type (strategy_type.hpp).
#include "ferry/memory/strategy.hpp"
#include "ferry/core/byte_size.hpp"

#include <algorithm>

#include "ferry/core/error.hpp"
#include "memory/strategy_type.hpp"

namespace ferry {

namespace {
std::string valid_names() {
  std::string names;
  for (const strategy_kind k : all_strategies) {
    if (!names.empty()) names += ", ";
    names += to_string(k);
  }
  return names;
}
}  // namespace

std::string_view to_string(strategy_kind k) noexcept {
  const memory::strategy_type* t = memory::find_type(k);
  return t != nullptr ? t->name() : std::string_view("unregistered");
}

strategy_properties properties(strategy_kind k) noexcept {
  const memory::strategy_type* t = memory::find_type(k);
  return t != nullptr ? t->properties() : strategy_properties{};
}

strategy_kind parse_strategy(std::string_view name) {
  for (const strategy_kind k : all_strategies)
    if (to_string(k) == name) return k;
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
  const memory::strategy_type* t = memory::find_type(k);
  if (t == nullptr) return "unknown strategy";
  return t->unavailable_reason(caps);
}

std::optional<std::string> managed_request_refusal(std::size_t bytes, std::size_t free_bytes, oversubscription policy) {
  if (policy == oversubscription::allow) return std::nullopt;
  if (bytes + managed_headroom_bytes <= free_bytes) return std::nullopt;
  return "managed request of " + format_byte_size(bytes) + " does not fit in the device's free memory (" +
         format_byte_size(free_bytes) + ", keeping " + format_byte_size(managed_headroom_bytes) +
         " headroom); oversubscription can stall every process on a shared GPU, so it is refused unless "
         "explicitly allowed";
}

namespace memory {
std::unique_ptr<buffer_body> strategy_type::wrap(std::span<std::byte> /*caller_memory*/,
                                                 const buffer_request& /*request*/, const device_caps& /*caps*/) const {
  throw invalid_argument("strategy '" + std::string(name()) + "' cannot wrap caller memory");
}
}  // namespace memory

}  // namespace ferry
